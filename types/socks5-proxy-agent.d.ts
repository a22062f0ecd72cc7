// ferro/types/socks5-proxy-agent: the names undici declares in its types/socks5-proxy-agent.d.ts, re-exported from ferro's own declarations.
export { Socks5ProxyAgent as default, Socks5ProxyAgent } from '../dist/main.js';
