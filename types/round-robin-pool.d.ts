// ferro/types/round-robin-pool: the names undici declares in its types/round-robin-pool.d.ts, re-exported from ferro's own declarations.
export { RoundRobinPool as default, RoundRobinPool } from '../dist/main.js';
