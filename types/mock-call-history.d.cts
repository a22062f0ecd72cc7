// ferro/types/mock-call-history for CommonJS consumers: the same declarations as mock-call-history.d.ts (see main.d.cts).
import type * as m from './mock-call-history.js' with { 'resolution-mode': 'import' };
export = m;
