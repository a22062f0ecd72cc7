// ferro/types/balanced-pool: the names undici declares in its types/balanced-pool.d.ts, re-exported from ferro's own declarations.
export { BalancedPool as default, BalancedPool } from '../dist/main.js';
