// RedisCacheStore against a real redis-server started for this file: the cache store contract,
// key prefixes, an entry shared by two processes, and a server that dies or is absent (requests
// go to the origin, a CacheStoreWarning says why, nothing hangs). The interceptor's RFC 9111
// cases run over this store in cache-directives.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Redis } from 'iovalkey';
import { Agent, cacheStores, errors, interceptors } from '../ts/index.js';
import { countingOrigin, type Route } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';
import { bodyOf, cacheStoreContract, key, put, value } from './fixtures/cache-store-contract.js';
import { hasRedisServer, noRedisReason, startRedis, type RedisServer } from './fixtures/redis-server.js';

const { RedisCacheStore } = cacheStores;
type Store = InstanceType<typeof RedisCacheStore>;
const { track, push } = useCleanup();

let server: RedisServer | undefined;
let prefixes = 0;
/** A store on the file's server with a key prefix of its own, closed after the test. */
function store(opts: { maxEntrySize?: number; keyPrefix?: string; url?: string } = {}): Store {
  const s = new RedisCacheStore({ url: server!.url, keyPrefix: `test${process.pid}-${++prefixes}:`, ...opts });
  push(() => s.close());
  return s;
}

const cacheable: Route = (_req, res, hit) => {
  res.writeHead(200, { 'cache-control': 'max-age=600' });
  res.end(`response ${hit}`);
};

function nextWarning(): Promise<Error> {
  return new Promise((resolve) => {
    const on = (w: Error): void => {
      if (w.name !== 'CacheStoreWarning') return;
      process.off('warning', on);
      resolve(w);
    };
    process.on('warning', on);
  });
}

if (!hasRedisServer) {
  describe('RedisCacheStore', () => {
    it.skip(noRedisReason, () => {});
  });
}

describe.skipIf(!hasRedisServer)('RedisCacheStore', () => {
  beforeAll(async () => {
    server = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await server?.close();
  });

  cacheStoreContract('RedisCacheStore', (opts) => store(opts));

  it('checks its options with InvalidArgumentError', () => {
    for (const bad of [
      {},
      { url: 'redis://127.0.0.1:1', client: {} },
      { url: 7 },
      { client: { status: 'ready' } },
      { url: 'redis://127.0.0.1:1', keyPrefix: 1 },
      { url: 'redis://127.0.0.1:1', maxEntrySize: -1 },
      { url: 'redis://127.0.0.1:1', commandTimeout: 0 },
    ]) {
      expect(() => new RedisCacheStore(bad as never)).toThrow(errors.InvalidArgumentError);
    }
    expect(() => new RedisCacheStore(null as never)).toThrow(errors.InvalidArgumentError);
  });

  it('keeps applications apart by key prefix', async () => {
    const a = store({ keyPrefix: 'app-a:' });
    const b = store({ keyPrefix: 'app-b:' });
    await put(a, key('/p'), 'from a');
    expect(await b.get(key('/p'))).toBeUndefined();
    await put(b, key('/p'), 'from b');
    expect(await bodyOf(a, key('/p'))).toBe('from a');
    expect(await bodyOf(b, key('/p'))).toBe('from b');
    await b.delete(key('/p'));
    expect(await bodyOf(a, key('/p'))).toBe('from a');
    // The URL's hash and its body list, both under the prefix.
    expect(((await a.client.call('keys', 'app-a:*')) as string[]).length).toBe(2);
  });

  it('stores bodies in 64 KiB list elements, every key expiring with the stale window (TTL = freshness + stale window)', async () => {
    const s = store({ keyPrefix: `ttl${process.pid}:` });
    const now = Date.now();
    await put(s, key('/ttl'), 'x'.repeat(70_000), value({ cachedAt: now, staleAt: now + 5_000, deleteAt: now + 30_000 }));
    const keys = (await s.client.call('keys', `ttl${process.pid}:*`)) as string[];
    expect(keys.length).toBe(2);
    // The 70,000-byte body is a list of 64 KiB elements.
    const body = keys.find((k) => k.includes(':body:'))!;
    expect(await s.client.call('llen', body)).toBe(2);
    for (const k of keys) {
      const ttl = Number(await s.client.call('pttl', k));
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
    }
  });

  it('a body list gone from the server (evicted by maxmemory) is a miss, and its entry is dropped', async () => {
    const s = store({ keyPrefix: `evict${process.pid}:` });
    await put(s, key('/e'), 'soon gone');
    const keys = (await s.client.call('keys', `evict${process.pid}:*:body:*`)) as string[];
    expect(keys.length).toBe(1);
    await s.client.call('del', keys[0]!);
    expect(await s.get(key('/e'))).toBeUndefined();
    await s.flush();
    await expect.poll(async () => ((await s.client.call('keys', `evict${process.pid}:*`)) as string[]).length).toBe(0);
  });

  it('flush() resolves once ended bodies are filed: another store instance sees them', async () => {
    const a = store({ keyPrefix: 'flush:' });
    const b = store({ keyPrefix: 'flush:' });
    // Both connected first, so that b's lookup could overtake a's filing.
    await Promise.all([a.client.call('ping'), b.client.call('ping')]);
    // 4 MiB: filing waits behind 64 list elements, time enough for b's lookup to get there first.
    const body = Buffer.alloc(4 * 1024 * 1024, 'f');
    const w = a.createWriteStream(key('/f'), value())!;
    w.end(body);
    await a.flush();
    expect((await bodyOf(b, key('/f')))?.length).toBe(body.length);
  });

  it('works on an existing client given as { client }, which it leaves open', async () => {
    const client = new Redis(server!.url);
    push(async () => void (await client.quit()));
    const s = new RedisCacheStore({ client, keyPrefix: `given${process.pid}:` });
    await put(s, key('/c'), 'through a given client');
    expect(await bodyOf(s, key('/c'))).toBe('through a given client');
    await s.close();
    expect(await client.call('ping')).toBe('PONG');
  });

  it('serves the interceptor: a hit the origin never sees, invalidated by an unsafe method', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ store: store() })));
    const get = async (method = 'GET'): Promise<string> => (await (await agent.request({ origin: origin.origin, path: '/x', method })).body.text());
    expect(await get()).toBe('response 1');
    expect(await get()).toBe('response 1');
    expect(origin.hits).toBe(1);
    await get('POST');
    expect(await get()).toBe('response 3');
  });

  describe('across processes', () => {
    const runChild = useChildRuns();

    it('a response stored by one process is served to another from the same server', async () => {
      const origin = track(await countingOrigin(cacheable));
      const script = `
        const store = new ferro.cacheStores.RedisCacheStore({ url: process.env.REDIS_URL, keyPrefix: 'shared:' });
        const agent = new ferro.Agent().compose(ferro.interceptors.cache({ store }));
        const { body } = await agent.request({ origin, path: '/shared', method: 'GET' });
        process.stdout.write(await body.text());
        await agent.close();
        await store.close();
      `;
      const env = { REDIS_URL: server!.url };
      const a = await runChild(undefined, origin.origin, script, env);
      const b = await runChild(undefined, origin.origin, script, env);
      expect(a.stdout).toBe('response 1');
      expect(b.stdout).toBe('response 1');
      expect(origin.hits).toBe(1);
      expect(a.stderr + b.stderr).not.toMatch(/Warning/);
    }, 60_000);
  });

  it('a server killed mid-run: the origin serves, a CacheStoreWarning says why, nothing hangs', async () => {
    const own = await startRedis();
    push(() => own.close());
    const s = store({ url: own.url });
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ store: s })));
    const get = async (): Promise<string> => (await (await agent.request({ origin: origin.origin, path: '/k', method: 'GET' })).body.text());
    expect(await get()).toBe('response 1');
    expect(await get()).toBe('response 1');
    const warning = nextWarning();
    await own.kill();
    const started = Date.now();
    expect(await get()).toBe('response 2');
    expect(await get()).toBe('response 3');
    expect(Date.now() - started).toBeLessThan(2_000);
    const w = await warning;
    expect(w.message).toMatch(/ECONNRESET|ECONNREFUSED|unavailable|Connection is closed/);
  });

  it('a server that is not there: misses at once, with a warning', async () => {
    const own = await startRedis();
    await own.close();
    const warning = nextWarning();
    const s = store({ url: own.url });
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ store: s })));
    const started = Date.now();
    for (let i = 1; i <= 3; i++) {
      expect(await (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text()).toBe(`response ${i}`);
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await warning).message).toMatch(/ECONNREFUSED|unavailable|max retries/);
  });
});

describe('RedisCacheStore without a server', () => {
  it('a store whose commands never answer counts them as misses after commandTimeout', async () => {
    // A client that accepts commands and never answers: only the store's own bound ends them.
    const silent = {
      status: 'ready',
      call: () => new Promise<never>(() => {}),
      callBuffer: () => new Promise<never>(() => {}),
      multi: () => ({ exec: () => new Promise<never>(() => {}) }),
      on: () => undefined,
      quit: async () => 'OK',
      disconnect: () => {},
    };
    const warning = nextWarning();
    const s = new RedisCacheStore({ client: silent, commandTimeout: 50 });
    const started = Date.now();
    expect(await s.get(key('/'))).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await warning).message).toMatch(/did not answer within 50 ms/);
  });
});
