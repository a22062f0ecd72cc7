// ferro/types/global-origin: the names undici declares in its types/global-origin.d.ts, re-exported from ferro's own declarations.
export { setGlobalOrigin, getGlobalOrigin } from '../dist/main.js';
