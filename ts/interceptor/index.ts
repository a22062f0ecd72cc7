// The `interceptors` namespace: pre-built interceptors for Dispatcher.compose.
import { decompress } from './decompress.js';
import { dns } from './dns.js';

export const interceptors = {
  decompress,
  dns,
};
export type { DecompressInterceptorOptions } from './decompress.js';
export type { DNSInterceptorOptions, DNSInterceptorRecord, DNSInterceptorOriginRecords, DNSStorage } from './dns.js';
