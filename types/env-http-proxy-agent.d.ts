// ferro/types/env-http-proxy-agent: the names undici declares in its types/env-http-proxy-agent.d.ts, re-exported from ferro's own declarations.
export { EnvHttpProxyAgent as default, EnvHttpProxyAgent } from '../dist/main.js';
