// The WHATWG CacheStorage (Service Workers §5.5), in memory: named Caches, `caches` as undici
// exports it.
import { newCache, type WebCache, type RequestInfo } from './web-cache.js';
import type { CacheStorage as PublicCacheStorage, MultiCacheQueryOptions } from './cache-types.js';

const kConstruct = Symbol('CacheStorage construct');

class MemoryCacheStorage {
  #caches = new Map<string, WebCache>();

  /** @internal The one instance is `caches`. */
  constructor(key?: symbol) {
    if (key !== kConstruct) throw new TypeError('Illegal constructor');
  }

  async match(request: RequestInfo, options: MultiCacheQueryOptions = {}): Promise<Response | undefined> {
    if (options.cacheName != null) return this.#caches.get(String(options.cacheName))?.match(request, options);
    // In creation order, the first cache with a match answers.
    for (const cache of this.#caches.values()) {
      const found = await cache.match(request, options);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  async has(cacheName: string): Promise<boolean> {
    return this.#caches.has(String(cacheName));
  }

  async open(cacheName: string): Promise<WebCache> {
    const name = String(cacheName);
    let cache = this.#caches.get(name);
    if (cache === undefined) this.#caches.set(name, (cache = newCache()));
    return cache;
  }

  async delete(cacheName: string): Promise<boolean> {
    return this.#caches.delete(String(cacheName));
  }

  async keys(): Promise<string[]> {
    return [...this.#caches.keys()];
  }
}

// Node's classes are what the public interfaces describe; the cast swaps one description for the other.
export const caches = new MemoryCacheStorage(kConstruct) as unknown as PublicCacheStorage;
export type { Cache, CacheQueryOptions, CacheStorage, MultiCacheQueryOptions } from './cache-types.js';
