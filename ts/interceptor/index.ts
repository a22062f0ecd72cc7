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
import { cookies } from './cookies.js';
import type { CacheInterceptorOptions } from './cache.js';
import type { DeduplicateInterceptorOptions } from './deduplicate.js';
import type { DecompressInterceptorOptions } from './decompress.js';
import type { DNSInterceptorOptions } from './dns.js';

export const interceptors = {
  redirect,
  retry,
  dump,
  responseError,
  cache,
  deduplicate,
  decompress,
  dns,
  cookies,
};
export type { CacheInterceptorOptions } from './cache.js';
export type { DeduplicateInterceptorOptions, PendingRequestsMessage } from './deduplicate.js';
export type { DecompressInterceptorOptions } from './decompress.js';
export type { DNSInterceptorOptions, DNSInterceptorRecord, DNSInterceptorOriginRecords, DNSStorage } from './dns.js';
export type { CookiesInterceptorOptions } from './cookies.js';
export type { DumpInterceptorOpts } from './dump.js';
export type { RedirectInterceptorOpts } from './redirect.js';
export type { RetryInterceptorOpts } from './retry.js';
export type { ResponseErrorInterceptorOpts } from './response-error.js';

// undici's names for the option types (its `Interceptors.*Opts`, `CacheHandler.CacheOptions`);
// ferro's `*Options` names above stay as they were.
export type CacheOptions = CacheInterceptorOptions;
export type CacheInterceptorOpts = CacheInterceptorOptions;
export type DeduplicateInterceptorOpts = DeduplicateInterceptorOptions;
export type DecompressInterceptorOpts = DecompressInterceptorOptions;
export type DNSInterceptorOpts = DNSInterceptorOptions;
