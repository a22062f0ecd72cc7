// ferro/types/pool: the names undici declares in its types/pool.d.ts, re-exported from ferro's own declarations.
export { Pool as default, Pool } from '../dist/main.js';
