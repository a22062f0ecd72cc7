// ferro/types/mock-interceptor for CommonJS consumers: the same declarations as mock-interceptor.d.ts (see main.d.cts).
import type * as m from './mock-interceptor.js' with { 'resolution-mode': 'import' };
export = m;
