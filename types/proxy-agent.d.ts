// ferro/types/proxy-agent: the names undici declares in its types/proxy-agent.d.ts, re-exported from ferro's own declarations.
export { ProxyAgent as default, ProxyAgent } from '../dist/main.js';
