// ferro/types/mock-agent for CommonJS consumers: the same declarations as mock-agent.d.ts (see main.d.cts).
import type * as m from './mock-agent.js' with { 'resolution-mode': 'import' };
export = m;
