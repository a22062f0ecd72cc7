// ferro/types/env-http-proxy-agent for CommonJS consumers: the same declarations as env-http-proxy-agent.d.ts (see main.d.cts).
import type * as m from './env-http-proxy-agent.js' with { 'resolution-mode': 'import' };
export = m;
