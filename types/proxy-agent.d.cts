// ferro/types/proxy-agent for CommonJS consumers: the same declarations as proxy-agent.d.ts (see main.d.cts).
import type * as m from './proxy-agent.js' with { 'resolution-mode': 'import' };
export = m;
