// ferro/types/api: the names undici declares in its types/api.d.ts, re-exported from ferro's own declarations.
export { request, stream, pipeline, connect, upgrade } from '../dist/main.js';
