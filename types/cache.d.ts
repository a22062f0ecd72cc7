// ferro/types/cache: the names undici declares in its types/cache.d.ts, re-exported from ferro's own declarations.
export { caches, type CacheStorage, type Cache, type CacheQueryOptions, type MultiCacheQueryOptions } from '../dist/main.js';
