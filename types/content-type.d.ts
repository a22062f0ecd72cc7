// ferro/types/content-type: the names undici declares in its types/content-type.d.ts, re-exported from ferro's own declarations.
export { parseMIMEType, serializeAMimeType, type MIMEType } from '../dist/main.js';
