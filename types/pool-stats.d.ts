// ferro/types/pool-stats: the names undici declares in its types/pool-stats.d.ts, re-exported from ferro's own declarations.
export type { PoolStats as default, PoolStats } from '../dist/main.js';
