// ferro/types/mock-client: the names undici declares in its types/mock-client.d.ts, re-exported from ferro's own declarations.
export { MockClient as default, MockClient } from '../dist/main.js';
