// ferro/types/interceptors for CommonJS consumers: the same declarations as interceptors.d.ts (see main.d.cts).
import type * as m from './interceptors.js' with { 'resolution-mode': 'import' };
export = m;
