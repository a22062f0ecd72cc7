// ferro/types/retry-handler: the names undici declares in its types/retry-handler.d.ts, re-exported from ferro's own declarations.
export { RetryHandler as default, RetryHandler } from '../dist/main.js';
