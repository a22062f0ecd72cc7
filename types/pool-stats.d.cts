// ferro/types/pool-stats for CommonJS consumers: the same declarations as pool-stats.d.ts (see main.d.cts).
import type * as m from './pool-stats.js' with { 'resolution-mode': 'import' };
export = m;
