// ferro/types/mock-errors for CommonJS consumers: the same declarations as mock-errors.d.ts (see main.d.cts).
import type * as m from './mock-errors.js' with { 'resolution-mode': 'import' };
export = m;
