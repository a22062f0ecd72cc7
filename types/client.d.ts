// ferro/types/client: the names undici declares in its types/client.d.ts, re-exported from ferro's own declarations.
export { Client as default, Client } from '../dist/main.js';
