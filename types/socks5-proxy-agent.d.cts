// ferro/types/socks5-proxy-agent for CommonJS consumers: the same declarations as socks5-proxy-agent.d.ts (see main.d.cts).
import type * as m from './socks5-proxy-agent.js' with { 'resolution-mode': 'import' };
export = m;
