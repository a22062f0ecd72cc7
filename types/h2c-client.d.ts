// ferro/types/h2c-client: the names undici declares in its types/h2c-client.d.ts, re-exported from ferro's own declarations.
export { H2CClient as default, H2CClient } from '../dist/main.js';
