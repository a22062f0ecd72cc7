// ferro/types/round-robin-pool for CommonJS consumers: the same declarations as round-robin-pool.d.ts (see main.d.cts).
import type * as m from './round-robin-pool.js' with { 'resolution-mode': 'import' };
export = m;
