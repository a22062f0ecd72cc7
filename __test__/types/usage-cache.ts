// The cache and deduplicate interceptors and the cache stores, written as undici's documentation
// uses them; type-checked against undici's typings and against ferro's (types.test.ts).
import { Agent, cacheStores, interceptors } from 'lib-under-test';
import { Writable } from 'node:stream';

interface Key {
  origin: string;
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
}
interface Value {
  statusCode: number;
  statusMessage: string;
  headers: Record<string, string | string[]>;
  cachedAt: number;
  staleAt: number;
  deleteAt: number;
}

export async function caching(origin: string): Promise<string> {
  const store = new cacheStores.MemoryCacheStore({ maxSize: 1024 * 1024, maxCount: 100, maxEntrySize: 64 * 1024 });
  const agent = new Agent().compose(
    interceptors.cache({ store, methods: ['GET', 'HEAD'], cacheByDefault: 60_000, type: 'private' }),
    interceptors.deduplicate({ methods: ['GET'], skipHeaderNames: ['x-skip'], excludeHeaderNames: ['x-request-id'], maxBufferSize: 1024 }),
  );
  const { body } = await agent.request({ origin, path: '/', method: 'GET' });
  const text = await body.text();

  const persistent = new cacheStores.SqliteCacheStore({ location: ':memory:', maxCount: 10, maxEntrySize: 1024 });
  persistent.close();

  // A custom store: any object with get / createWriteStream / delete.
  const entries = new Map<string, Value>();
  const custom = {
    get(key: Key) {
      const value = entries.get(key.path);
      return value === undefined ? undefined : Promise.resolve({ ...value, cacheControlDirectives: {}, body: Buffer.from('') });
    },
    createWriteStream(key: Key, value: Value) {
      entries.set(key.path, value);
      return new Writable({ write: (_chunk, _encoding, done) => done() });
    },
    delete(key: Key) {
      entries.delete(key.path);
    },
  };
  new Agent().compose(interceptors.cache({ store: custom }));
  return text;
}
