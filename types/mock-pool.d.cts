// ferro/types/mock-pool for CommonJS consumers: the same declarations as mock-pool.d.ts (see main.d.cts).
import type * as m from './mock-pool.js' with { 'resolution-mode': 'import' };
export = m;
