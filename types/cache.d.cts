// ferro/types/cache for CommonJS consumers: the same declarations as cache.d.ts (see main.d.cts).
import type * as m from './cache.js' with { 'resolution-mode': 'import' };
export = m;
