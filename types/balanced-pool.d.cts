// ferro/types/balanced-pool for CommonJS consumers: the same declarations as balanced-pool.d.ts (see main.d.cts).
import type * as m from './balanced-pool.js' with { 'resolution-mode': 'import' };
export = m;
