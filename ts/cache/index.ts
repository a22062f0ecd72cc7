// The `cacheStores` namespace: the stores the cache interceptor ships with.
import { MemoryCacheStore } from './memory-cache-store.js';
import { RedisCacheStore } from './redis-cache-store.js';
import { SqliteCacheStore } from './sqlite-cache-store.js';

export const cacheStores = {
  MemoryCacheStore,
  SqliteCacheStore,
  RedisCacheStore,
};
export type { MemoryCacheStoreOpts } from './memory-cache-store.js';
export type { SqliteCacheStoreOpts } from './sqlite-cache-store.js';
export type { RedisCacheStoreOpts, RedisClientLike } from './redis-cache-store.js';
export type {
  CacheControlDirectives,
  CacheKey,
  CacheMethods,
  CacheStore,
  CacheValue,
  GetResult,
} from './cache-store.js';
