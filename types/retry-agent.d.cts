// ferro/types/retry-agent for CommonJS consumers: the same declarations as retry-agent.d.ts (see main.d.cts).
import type * as m from './retry-agent.js' with { 'resolution-mode': 'import' };
export = m;
