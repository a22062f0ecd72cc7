// The `interceptors` namespace: factories returning an interceptor for Dispatcher.compose().
import { cache } from './cache.js';

export const interceptors = {
  cache,
};
export type { CacheInterceptorOptions } from './cache.js';
