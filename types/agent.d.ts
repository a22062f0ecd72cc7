// ferro/types/agent: the names undici declares in its types/agent.d.ts, re-exported from ferro's own declarations.
export { Agent as default, Agent } from '../dist/main.js';
