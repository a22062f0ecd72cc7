// ferro/types/mock-agent: the names undici declares in its types/mock-agent.d.ts, re-exported from ferro's own declarations.
export { MockAgent as default, MockAgent } from '../dist/main.js';
