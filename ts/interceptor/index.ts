// The `interceptors` namespace: factories returning an interceptor for Dispatcher.compose().
import { cache } from './cache.js';
import { deduplicate } from './deduplicate.js';

export const interceptors = {
  cache,
  deduplicate,
};
export type { CacheInterceptorOptions } from './cache.js';
export type { DeduplicateInterceptorOptions, PendingRequestsMessage } from './deduplicate.js';
