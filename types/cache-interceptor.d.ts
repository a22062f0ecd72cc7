// ferro/types/cache-interceptor: undici's `CacheHandler` namespace of cache types.
import type * as Ferro from '../dist/main.js';
declare namespace CacheHandler {
  type CacheOptions = Ferro.CacheOptions;
  type CacheMethods = Ferro.CacheMethods;
  type CacheKey = Ferro.CacheKey;
  type CacheValue = Ferro.CacheValue;
  type GetResult = Ferro.GetResult;
  type CacheStore = Ferro.CacheStore;
  type CacheControlDirectives = Ferro.CacheControlDirectives;
  type MemoryCacheStoreOpts = Ferro.MemoryCacheStoreOpts;
  type SqliteCacheStoreOpts = Ferro.SqliteCacheStoreOpts;
}
export default CacheHandler;
