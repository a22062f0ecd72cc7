// ferro/types/retry-agent: the names undici declares in its types/retry-agent.d.ts, re-exported from ferro's own declarations.
export { RetryAgent as default, RetryAgent } from '../dist/main.js';
