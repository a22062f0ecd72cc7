// ferro/types/pool for CommonJS consumers: the same declarations as pool.d.ts (see main.d.cts).
import type * as m from './pool.js' with { 'resolution-mode': 'import' };
export = m;
