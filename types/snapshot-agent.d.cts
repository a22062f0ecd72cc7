// ferro/types/snapshot-agent for CommonJS consumers: the same declarations as snapshot-agent.d.ts (see main.d.cts).
import type * as m from './snapshot-agent.js' with { 'resolution-mode': 'import' };
export = m;
