// The Cache API's public declarations (undici's types/cache.d.ts), in ferro's own fetch types:
// the implementation (web-cache.ts, cache-storage.ts) works on Node's classes and the DOM lib's
// types, as fetch.ts does; these describe the same objects to users.
import type { Request, RequestInfo, Response } from './fetch-types.js';

export interface CacheQueryOptions {
  ignoreSearch?: boolean;
  ignoreMethod?: boolean;
  ignoreVary?: boolean;
}

export interface MultiCacheQueryOptions extends CacheQueryOptions {
  cacheName?: string;
}

export interface Cache {
  match(request: RequestInfo, options?: CacheQueryOptions): Promise<Response | undefined>;
  matchAll(request?: RequestInfo, options?: CacheQueryOptions): Promise<readonly Response[]>;
  add(request: RequestInfo): Promise<undefined>;
  addAll(requests: RequestInfo[]): Promise<undefined>;
  put(request: RequestInfo, response: Response): Promise<undefined>;
  delete(request: RequestInfo, options?: CacheQueryOptions): Promise<boolean>;
  keys(request?: RequestInfo, options?: CacheQueryOptions): Promise<readonly Request[]>;
}

export interface CacheStorage {
  match(request: RequestInfo, options?: MultiCacheQueryOptions): Promise<Response | undefined>;
  has(cacheName: string): Promise<boolean>;
  open(cacheName: string): Promise<Cache>;
  delete(cacheName: string): Promise<boolean>;
  keys(): Promise<string[]>;
}
