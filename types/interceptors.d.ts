// ferro/types/interceptors: undici's `Interceptors` namespace — the interceptor factories plus their option types.
import { interceptors } from '../dist/main.js';
import type * as Ferro from '../dist/main.js';
declare const Interceptors: typeof interceptors;
declare namespace Interceptors {
  type DumpInterceptorOpts = Ferro.DumpInterceptorOpts;
  type RetryInterceptorOpts = Ferro.RetryInterceptorOpts;
  type RedirectInterceptorOpts = Ferro.RedirectInterceptorOpts;
  type DecompressInterceptorOpts = Ferro.DecompressInterceptorOpts;
  type ResponseErrorInterceptorOpts = Ferro.ResponseErrorInterceptorOpts;
  type CacheInterceptorOpts = Ferro.CacheInterceptorOpts;
  type DeduplicateInterceptorOpts = Ferro.DeduplicateInterceptorOpts;
  type DNSInterceptorOpts = Ferro.DNSInterceptorOpts;
  type DNSInterceptorRecord = Ferro.DNSInterceptorRecord;
  type DNSInterceptorOriginRecords = Ferro.DNSInterceptorOriginRecords;
  type DNSStorage = Ferro.DNSStorage;
}
export default Interceptors;
