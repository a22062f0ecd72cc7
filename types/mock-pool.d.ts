// ferro/types/mock-pool: the names undici declares in its types/mock-pool.d.ts, re-exported from ferro's own declarations.
export { MockPool as default, MockPool } from '../dist/main.js';
