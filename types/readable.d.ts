// ferro/types/readable: the names undici declares in its types/readable.d.ts, re-exported from ferro's own declarations.
export { BodyReadable as default, BodyReadable } from '../dist/main.js';
