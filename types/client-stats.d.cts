// ferro/types/client-stats for CommonJS consumers: the same declarations as client-stats.d.ts (see main.d.cts).
import type * as m from './client-stats.js' with { 'resolution-mode': 'import' };
export = m;
