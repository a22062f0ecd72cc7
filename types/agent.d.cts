// ferro/types/agent for CommonJS consumers: the same declarations as agent.d.ts (see main.d.cts).
import type * as m from './agent.js' with { 'resolution-mode': 'import' };
export = m;
