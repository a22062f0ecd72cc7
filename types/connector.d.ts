// ferro/types/connector: the names undici declares in its types/connector.d.ts, re-exported from ferro's own declarations.
export { buildConnector as default, buildConnector } from '../dist/main.js';
