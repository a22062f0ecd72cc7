// ferro/types/util: the names undici declares in its types/util.d.ts, re-exported from ferro's own declarations.
export { util } from '../dist/main.js';
