// The `interceptors` namespace: one factory per interceptor, each returning an Interceptor for
// Dispatcher.compose. One entry per line (several issues add to this list).
import { redirect } from './redirect.js';
import { retry } from './retry.js';
import { dump } from './dump.js';
import { responseError } from './response-error.js';
import { cache } from './cache.js';
import { deduplicate } from './deduplicate.js';
import { decompress } from './decompress.js';
import { dns } from './dns.js';

export const interceptors = {
  redirect,
  retry,
  dump,
  responseError,
  cache,
  deduplicate,
  decompress,
  dns,
};
export type { CacheInterceptorOptions } from './cache.js';
export type { DeduplicateInterceptorOptions, PendingRequestsMessage } from './deduplicate.js';
export type { DecompressInterceptorOptions } from './decompress.js';
export type { DNSInterceptorOptions, DNSInterceptorRecord, DNSInterceptorOriginRecords, DNSStorage } from './dns.js';
