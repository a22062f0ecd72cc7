// ferro/types/readable for CommonJS consumers: the same declarations as readable.d.ts (see main.d.cts).
import type * as m from './readable.js' with { 'resolution-mode': 'import' };
export = m;
