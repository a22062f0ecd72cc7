// The cache interceptor against a counting origin: freshness, Age, Vary, request and response
// directives, revalidation with 304 merging, RFC 5861 and invalidation. A response served from
// the cache is one the origin never saw (its hit count does not move). Every case runs once per
// store: the memory store (the default) and RedisCacheStore on a real redis-server.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, cacheStores, interceptors } from '../ts/index.js';
import type { CacheInterceptorOptions } from '../ts/index.js';
import { countingOrigin, type CountingOrigin, type Route } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';
import { hasRedisServer, noRedisReason, startRedis, type RedisServer } from './fixtures/redis-server.js';

const { track, push } = useCleanup();

type StoreKind = 'memory' | 'redis';
let storeKind: StoreKind = 'memory';
let redis: RedisServer | undefined;
let prefixes = 0;

/** The store option for the kind under test: undefined is the interceptor's default memory store. */
function storeOption(): CacheInterceptorOptions['store'] {
  if (storeKind === 'memory') return undefined;
  const store = new cacheStores.RedisCacheStore({ url: redis!.url, keyPrefix: `directives${process.pid}-${++prefixes}:` });
  push(() => store.close());
  return store;
}

beforeEach(() => {
  // Only Date is faked: sockets and timers run for real, the cache's clock moves on demand.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

const advance = (seconds: number): void => void vi.setSystemTime(Date.now() + seconds * 1000);
const httpDate = (offsetSeconds = 0): string => new Date(Date.now() + offsetSeconds * 1000).toUTCString();

interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

async function setup(route: Route, opts: CacheInterceptorOptions = {}): Promise<{
  origin: CountingOrigin;
  get(path?: string, headers?: Record<string, string>, method?: string): Promise<Got>;
}> {
  const origin = track(await countingOrigin(route));
  const agent = track(new Agent().compose(interceptors.cache({ store: storeOption(), ...opts })));
  const get = async (path = '/', headers: Record<string, string> = {}, method = 'GET'): Promise<Got> => {
    const res = await agent.request({ origin: origin.origin, path, method, headers });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  };
  return { origin, get };
}

/** A route answering with `headers` and a body naming the hit, so bodies show which response came back. */
const answer = (headers: Record<string, string>, status = 200): Route => (_req, res, hit) => {
  res.writeHead(status, headers);
  res.end(`response ${hit}`);
};
for (const kind of ['memory', 'redis'] as const) {
describe.skipIf(kind === 'redis' && !hasRedisServer)(`over the ${kind} store${kind === 'redis' && !hasRedisServer ? ` (skipped: ${noRedisReason})` : ''}`, () => {
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await redis?.close();
    redis = undefined;
  });
  beforeEach(() => {
    storeKind = kind;
  });

  describe('freshness', () => {
    it('serves a fresh max-age response from the cache with its Age', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=60' }));
      const first = await get();
      expect(first.body).toBe('response 1');
      advance(10);
      const second = await get();
      expect(second).toMatchObject({ status: 200, body: 'response 1' });
      expect(second.headers.age).toBe('10');
      expect(origin.hits).toBe(1);
    });

    it('goes back to the origin once the response is stale', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=5' }));
      await get();
      advance(6);
      expect((await get()).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });

    it('counts the Age the origin sent against the lifetime', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=60', age: '50' }));
      await get();
      advance(5);
      expect((await get()).headers.age).toBe('55');
      advance(6);
      await get();
      expect(origin.hits).toBe(2);
    });

    it('uses s-maxage over max-age in a shared cache and ignores it in a private one', async () => {
      const headers = { 'cache-control': 'max-age=5, s-maxage=100' };
      const shared = await setup(answer(headers));
      await shared.get();
      advance(50);
      await shared.get();
      expect(shared.origin.hits).toBe(1);

      const priv = await setup(answer(headers), { type: 'private' });
      await priv.get();
      advance(50);
      await priv.get();
      expect(priv.origin.hits).toBe(2);
    });

    it('uses Expires relative to Date when there is no max-age', async () => {
      const { origin, get } = await setup((_req, res, hit) => {
        res.writeHead(200, { date: httpDate(), expires: httpDate(30) });
        res.end(`response ${hit}`);
      });
      await get();
      advance(20);
      expect((await get()).body).toBe('response 1');
      advance(20);
      expect((await get()).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });

    it('treats an invalid Expires as already expired', async () => {
      const { origin, get } = await setup(answer({ expires: '0' }));
      await get();
      await get();
      expect(origin.hits).toBe(2);
    });

    it('gives heuristically cacheable statuses 10% of the time since Last-Modified', async () => {
      const { origin, get } = await setup((_req, res, hit) => {
        // Modified 1000 s ago: fresh for 100 s.
        res.writeHead(404, { date: httpDate(), 'last-modified': httpDate(-1000) });
        res.end(`missing ${hit}`);
      });
      await get();
      advance(90);
      expect(await get()).toMatchObject({ status: 404, body: 'missing 1' });
      expect(origin.hits).toBe(1);
    });

    it('stores nothing without explicit or heuristic freshness, unless cacheByDefault says so', async () => {
      const plain = await setup(answer({}));
      await plain.get();
      await plain.get();
      expect(plain.origin.hits).toBe(2);

      const byDefault = await setup(answer({}), { cacheByDefault: 30_000 });
      await byDefault.get();
      advance(29);
      expect((await byDefault.get()).body).toBe('response 1');
      advance(2);
      expect((await byDefault.get()).body).toBe('response 2');
    });

    it('does not apply heuristics or cacheByDefault to statuses that are not heuristically cacheable', async () => {
      const { origin, get } = await setup(answer({ 'last-modified': httpDate(-10_000), location: '/x' }, 302), {
        cacheByDefault: 60_000,
      });
      await get();
      await get();
      expect(origin.hits).toBe(2);
    });

    it('caches an explicitly fresh 302', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=60', location: '/x' }, 302));
      await get();
      expect((await get()).status).toBe(302);
      expect(origin.hits).toBe(1);
    });
  });

  describe('Vary', () => {
    it('keeps one response per value of the varying request header', async () => {
      const { origin, get } = await setup((req, res, hit) => {
        res.writeHead(200, { 'cache-control': 'max-age=60', vary: 'Accept-Language' });
        res.end(`${req.headers['accept-language'] ?? 'none'} ${hit}`);
      });
      expect((await get('/', { 'accept-language': 'en' })).body).toBe('en 1');
      expect((await get('/', { 'accept-language': 'fr' })).body).toBe('fr 2');
      expect((await get('/')).body).toBe('none 3');
      expect((await get('/', { 'accept-language': 'en' })).body).toBe('en 1');
      expect((await get('/', { 'accept-language': 'fr' })).body).toBe('fr 2');
      expect((await get('/')).body).toBe('none 3');
      expect(origin.hits).toBe(3);
    });

    it('never serves a response with Vary: *', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=60', vary: '*' }));
      await get();
      await get();
      expect(origin.hits).toBe(2);
    });
  });

  describe('response directives', () => {
    it('no-store: never stored', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=60, no-store' }));
      await get();
      await get();
      expect(origin.hits).toBe(2);
    });

    it('must-understand: a known status is stored despite the fallback no-store, an unknown one is not', async () => {
      const known = await setup(answer({ 'cache-control': 'max-age=60, no-store, must-understand' }));
      await known.get();
      await known.get();
      expect(known.origin.hits).toBe(1);
      const unknown = await setup(answer({ 'cache-control': 'max-age=60, no-store, must-understand' }, 299));
      await unknown.get();
      await unknown.get();
      expect(unknown.origin.hits).toBe(2);
    });

    it('no-cache: stored but revalidated on every use; a 304 merges its headers into the stored response', async () => {
      const { origin, get } = await setup((req, res, hit) => {
        if (req.headers['if-none-match'] === '"v1"') {
          res.writeHead(304, { etag: '"v1"', 'x-checked': String(hit), 'cache-control': 'no-cache' });
          return res.end();
        }
        res.writeHead(200, { etag: '"v1"', 'cache-control': 'no-cache', 'x-checked': String(hit), 'content-type': 'text/plain' });
        res.end('the body');
      });
      await get();
      const second = await get();
      expect(second).toMatchObject({ status: 200, body: 'the body' });
      expect(second.headers['x-checked']).toBe('2');
      expect(second.headers['content-type']).toBe('text/plain');
      expect(origin.hits).toBe(2);
      expect(origin.seen[1]!.headers['if-none-match']).toBe('"v1"');
      const third = await get();
      expect(third.headers['x-checked']).toBe('3');
      expect(origin.hits).toBe(3);
    });

    it('revalidates a stale response with If-Modified-Since and refreshes its freshness from the 304', async () => {
      const lastModified = httpDate(-3600);
      const { origin, get } = await setup((req, res, hit) => {
        if (req.headers['if-modified-since'] === lastModified) {
          res.writeHead(304, { 'cache-control': 'max-age=100' });
          return res.end();
        }
        res.writeHead(200, { 'cache-control': 'max-age=10', 'last-modified': lastModified });
        res.end(`body ${hit}`);
      });
      await get();
      advance(20);
      expect((await get()).body).toBe('body 1');
      expect(origin.hits).toBe(2);
      advance(50);
      expect((await get()).body).toBe('body 1');
      expect(origin.hits).toBe(2);
    });

    it('a 304 naming another validator is not served: the request is retried unconditionally', async () => {
      const { origin, get } = await setup((req, res, hit) => {
        if (req.headers['if-none-match'] !== undefined) {
          res.writeHead(304, { etag: '"other"' });
          return res.end();
        }
        res.writeHead(200, { 'cache-control': 'max-age=10', etag: `"v${hit}"` });
        res.end(`body ${hit}`);
      });
      await get();
      advance(20);
      expect(await get()).toMatchObject({ status: 200, body: 'body 3' });
      expect(origin.seen.map((s) => s.headers['if-none-match'])).toEqual([undefined, '"v1"', undefined]);
      expect((await get()).body).toBe('body 3');
    });

    it('a 200 answering a revalidation replaces the stored response', async () => {
      const { origin, get } = await setup((_req, res, hit) => {
        res.writeHead(200, { 'cache-control': 'max-age=10', etag: `"v${hit}"` });
        res.end(`body ${hit}`);
      });
      await get();
      advance(20);
      expect((await get()).body).toBe('body 2');
      expect(origin.seen[1]!.headers['if-none-match']).toBe('"v1"');
      expect((await get()).body).toBe('body 2');
      expect(origin.hits).toBe(2);
    });

    it('private: stored by a private cache only', async () => {
      const headers = { 'cache-control': 'private, max-age=60' };
      const shared = await setup(answer(headers));
      await shared.get();
      await shared.get();
      expect(shared.origin.hits).toBe(2);
      const priv = await setup(answer(headers), { type: 'private' });
      await priv.get();
      await priv.get();
      expect(priv.origin.hits).toBe(1);
    });

    it('private="field": a shared cache stores the response without that field', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'private="x-user", max-age=60', 'x-user': 'alice' }));
      expect((await get()).headers['x-user']).toBe('alice');
      const second = await get();
      expect(second.headers['x-user']).toBeUndefined();
      expect(origin.hits).toBe(1);
    });

    it('must-revalidate: a stale response is not served even when the request accepts stale ones', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=1, must-revalidate' }));
      await get();
      advance(10);
      expect((await get('/', { 'cache-control': 'max-stale=3600' })).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });

    it('proxy-revalidate binds a shared cache but not a private one', async () => {
      const headers = { 'cache-control': 'max-age=1, proxy-revalidate' };
      const shared = await setup(answer(headers));
      await shared.get();
      advance(10);
      await shared.get('/', { 'cache-control': 'max-stale' });
      expect(shared.origin.hits).toBe(2);
      const priv = await setup(answer(headers), { type: 'private' });
      await priv.get();
      advance(10);
      expect((await priv.get('/', { 'cache-control': 'max-stale' })).body).toBe('response 1');
      expect(priv.origin.hits).toBe(1);
    });

    it('authorization: a shared cache stores the answer only when the response allows it', async () => {
      const auth = { authorization: 'Bearer t' };
      const plain = await setup(answer({ 'cache-control': 'max-age=60' }));
      await plain.get('/', auth);
      await plain.get('/', auth);
      expect(plain.origin.hits).toBe(2);
      const pub = await setup(answer({ 'cache-control': 'public, max-age=60' }));
      await pub.get('/', auth);
      await pub.get('/', auth);
      expect(pub.origin.hits).toBe(1);
      const priv = await setup(answer({ 'cache-control': 'max-age=60' }), { type: 'private' });
      await priv.get('/', auth);
      await priv.get('/', auth);
      expect(priv.origin.hits).toBe(1);
    });
  });

  describe('request directives', () => {
    const fresh = answer({ 'cache-control': 'max-age=600' });

    it('max-age: a stored response older than asked for is refetched', async () => {
      const { origin, get } = await setup(fresh);
      await get();
      advance(30);
      expect((await get('/', { 'cache-control': 'max-age=60' })).body).toBe('response 1');
      expect((await get('/', { 'cache-control': 'max-age=10' })).body).toBe('response 2');
      expect(origin.hits).toBe(2);
      // The clock has not moved since response 2 was stored: max-age=0 still goes to the origin.
      expect((await get('/', { 'cache-control': 'max-age=0' })).body).toBe('response 3');
    });

    it('max-stale: a stale response within the allowance is served', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=10' }));
      await get();
      advance(30);
      expect((await get('/', { 'cache-control': 'max-stale=60' })).body).toBe('response 1');
      expect((await get('/', { 'cache-control': 'max-stale=5' })).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });

    it('min-fresh: a response about to go stale is refetched', async () => {
      const { origin, get } = await setup(fresh);
      await get();
      advance(500);
      expect((await get('/', { 'cache-control': 'min-fresh=50' })).body).toBe('response 1');
      expect((await get('/', { 'cache-control': 'min-fresh=200' })).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });

    it('no-cache and Pragma: no-cache go to the origin', async () => {
      const { origin, get } = await setup(fresh);
      await get();
      expect((await get('/', { 'cache-control': 'no-cache' })).body).toBe('response 2');
      expect((await get('/', { pragma: 'no-cache' })).body).toBe('response 3');
      expect(origin.hits).toBe(3);
    });

    it('no-store: passes by the cache and stores nothing', async () => {
      const { origin, get } = await setup(fresh);
      await get('/', { 'cache-control': 'no-store' });
      await get();
      expect(origin.hits).toBe(2);
    });

    it('only-if-cached: 504 on a miss, the stored response on a hit, never the origin', async () => {
      const { origin, get } = await setup(fresh);
      const miss = await get('/', { 'cache-control': 'only-if-cached' });
      expect(miss.status).toBe(504);
      expect(origin.hits).toBe(0);
      await get();
      const hit = await get('/', { 'cache-control': 'only-if-cached' });
      expect(hit).toMatchObject({ status: 200, body: 'response 1' });
      expect(origin.hits).toBe(1);
    });
  });

  describe('stale-while-revalidate (RFC 5861)', () => {
    it('serves stale at once while exactly one background revalidation runs', async () => {
      const { origin, get } = await setup((_req, res, hit) => {
        res.writeHead(200, { 'cache-control': 'max-age=10, stale-while-revalidate=60', etag: `"v${hit}"` });
        res.end(`body ${hit}`);
      });
      await get();
      advance(20);
      const revalidation = origin.nextHit();
      const stale = await Promise.all([get(), get(), get()]);
      expect(stale.map((r) => r.body)).toEqual(['body 1', 'body 1', 'body 1']);
      await revalidation;
      // The background answer lands in the store; the next request gets it without another hit.
      await vi.waitUntil(async () => (await get('/', { 'cache-control': 'only-if-cached' })).body === 'body 2');
      expect(origin.hits).toBe(2);
      expect(origin.seen[1]!.headers['if-none-match']).toBe('"v1"');
    });

    it('past the window, revalidates before answering', async () => {
      const { origin, get } = await setup(answer({ 'cache-control': 'max-age=10, stale-while-revalidate=5' }));
      await get();
      advance(30);
      expect((await get()).body).toBe('response 2');
      expect(origin.hits).toBe(2);
    });
  });

  describe('stale-if-error (RFC 5861)', () => {
    it('serves the stale response when revalidation gets a 5xx or fails to connect', async () => {
      const { origin, get } = await setup((_req, res, hit) => {
        if (hit === 1) {
          res.writeHead(200, { 'cache-control': 'max-age=10, stale-if-error=60' });
          return res.end('good');
        }
        res.writeHead(503);
        res.end('down');
      });
      await get();
      advance(20);
      expect(await get()).toMatchObject({ status: 200, body: 'good' });
      expect(origin.hits).toBe(2);
      origin.route = (req) => req.socket.destroy();
      expect(await get()).toMatchObject({ status: 200, body: 'good' });
      advance(100);
      origin.route = (_req, res) => {
        res.writeHead(503);
        res.end('down');
      };
      expect(await get()).toMatchObject({ status: 503, body: 'down' });
    });

    it('honours stale-if-error from the request', async () => {
      const { get, origin } = await setup((_req, res, hit) => {
        res.writeHead(hit === 1 ? 200 : 500, hit === 1 ? { 'cache-control': 'max-age=10' } : {});
        res.end(hit === 1 ? 'good' : 'bad');
      });
      await get();
      advance(20);
      expect((await get()).status).toBe(500);
      expect((await get('/', { 'cache-control': 'stale-if-error=60' })).body).toBe('good');
      expect(origin.hits).toBe(3);
    });
  });

  describe('invalidation by unsafe methods', () => {
    it('a successful POST invalidates its target and same-origin Location / Content-Location', async () => {
      const { origin, get } = await setup((req, res, hit) => {
        if (req.method === 'POST') {
          res.writeHead(201, { location: '/b', 'content-location': 'http://elsewhere.example/c' });
          return res.end();
        }
        res.writeHead(200, { 'cache-control': 'max-age=600' });
        res.end(`${req.url} ${hit}`);
      });
      await get('/a');
      await get('/b');
      await get('/c');
      expect(origin.hits).toBe(3);
      await get('/a', {}, 'POST');
      expect((await get('/a')).body).toBe('/a 5');
      expect((await get('/b')).body).toBe('/b 6');
      // The Content-Location was on another origin: this origin's /c stays stored.
      expect((await get('/c')).body).toBe('/c 3');
      expect(origin.hits).toBe(6);
    });

    it('an error answer to a POST invalidates nothing', async () => {
      const { origin, get } = await setup((req, res, hit) => {
        res.writeHead(req.method === 'POST' ? 500 : 200, { 'cache-control': 'max-age=600' });
        res.end(`${hit}`);
      });
      await get('/a');
      await get('/a', {}, 'POST');
      expect((await get('/a')).body).toBe('1');
      expect(origin.hits).toBe(2);
    });
  });
});
}
