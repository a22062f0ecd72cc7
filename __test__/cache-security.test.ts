// The cache interceptor never serves one user's response to another: redirect chains (credentials,
// restrictive hops, other origins), revalidation answered by another origin, Set-Cookie in a shared
// cache, the origin a response is filed under, and the compose order that keeps those guards on.
// Every test is an attack through the public API against real loopback servers.
import { describe, expect, it } from 'vitest';
import { Agent, BalancedPool, Client, Pool, RetryAgent, RoundRobinPool, cacheStores, errors, interceptors } from '../ts/index.js';
import type { Dispatcher } from '../ts/index.js';
import { countingOrigin, type CountingOrigin } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

type Requester = { request: Agent['request'] };

async function get(d: Requester, origin: string, path: string, headers: Record<string, string> = {}) {
  const res = await d.request({ origin, path, method: 'GET', headers });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

const redirectThenCache = () => [interceptors.redirect({ maxRedirections: 3 }), interceptors.cache()];

describe('cache after a redirect chain', () => {
  it('a credentialed request that was redirected is not stored under the URL it asked for', async () => {
    for (const credential of ['cookie', 'authorization']) {
      // /me redirects each user to their own page (even marking the redirect cacheable); the page is public.
      const origin = track(
        await countingOrigin((req, res) => {
          if (req.url === '/me') {
            if (req.headers[credential] === undefined) {
              res.writeHead(401).end('who are you?');
              return;
            }
            res.writeHead(302, { location: '/users/alice', 'cache-control': 'max-age=600' }).end();
            return;
          }
          res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end(`profile of ${req.url}`);
        }),
      );
      const agent = track(new Agent().compose(redirectThenCache()));
      expect((await get(agent, origin.origin, '/me', { [credential]: 'alice' })).body).toBe('profile of /users/alice');
      const anonymous = await get(agent, origin.origin, '/me');
      expect(anonymous, credential).toMatchObject({ status: 401, body: 'who are you?' });
    }
  });

  it('judges the chain the same with deduplicate between the cache and the redirect', async () => {
    const origin = track(
      await countingOrigin((req, res) => {
        if (req.url !== '/me') res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end(`profile of ${req.url}`);
        else if (req.headers.cookie === undefined) res.writeHead(401).end('who are you?');
        else res.writeHead(302, { location: '/users/alice', 'cache-control': 'max-age=600' }).end();
      }),
    );
    const { redirect, deduplicate, cache } = interceptors;
    const agent = track(new Agent().compose(redirect({ maxRedirections: 3 }), deduplicate(), cache()));
    expect((await get(agent, origin.origin, '/me', { cookie: 'alice' })).body).toBe('profile of /users/alice');
    expect(await get(agent, origin.origin, '/me')).toMatchObject({ status: 401 });
  });

  it('a hop marked no-store keeps the chain out of the store', async () => {
    let target = '/users/alice';
    const origin = track(
      await countingOrigin((req, res) => {
        if (req.url === '/me') res.writeHead(302, { location: target, 'cache-control': 'no-store' }).end();
        else res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end(`profile of ${req.url}`);
      }),
    );
    const agent = track(new Agent().compose(redirectThenCache()));
    expect((await get(agent, origin.origin, '/me')).body).toBe('profile of /users/alice');
    target = '/users/bob';
    expect((await get(agent, origin.origin, '/me')).body).toBe('profile of /users/bob');
  });

  it('a same-origin chain whose hops are all cacheable is still served from the cache, no longer than its hops allow', async () => {
    const origin = track(
      await countingOrigin((req, res) => {
        if (req.url === '/old') res.writeHead(301, { location: '/new', 'cache-control': 'max-age=1' }).end();
        else res.writeHead(200, { 'cache-control': 'max-age=600' }).end(`page ${req.url}`);
      }),
    );
    const store = new cacheStores.MemoryCacheStore();
    const agent = track(new Agent().compose(interceptors.redirect({ maxRedirections: 3 }), interceptors.cache({ store })));
    expect((await get(agent, origin.origin, '/old')).body).toBe('page /new');
    expect((await get(agent, origin.origin, '/old')).body).toBe('page /new');
    expect(origin.hits).toBe(2);
    const stored = store.get({ origin: origin.origin, method: 'GET', path: '/old', headers: {} });
    // The 301 said one second: the entry folded from it is fresh that long, and then dropped.
    expect(stored?.staleAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(stored?.deleteAt).toBe(stored?.staleAt);
  });
});

describe('cache and other origins', () => {
  it('a redirect to another origin never fills the entry of the URL that redirected', async () => {
    let trustedRoute: 'redirect' | 'own' = 'redirect';
    const attacker = track(
      await countingOrigin((req, res) => {
        if (req.url === '/bounce') res.writeHead(302, { location: `${trusted.origin}/c`, 'cache-control': 'max-age=600' }).end();
        else res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end('evil');
      }),
    );
    const trusted: CountingOrigin = track(
      await countingOrigin((req, res) => {
        if (trustedRoute === 'redirect' && req.url === '/x') {
          res.writeHead(302, { location: `${attacker.origin}/evil`, 'cache-control': 'max-age=600' }).end();
        } else if (trustedRoute === 'redirect' && req.url === '/a') {
          res.writeHead(302, { location: `${attacker.origin}/bounce`, 'cache-control': 'max-age=600' }).end();
        } else {
          res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end(`good ${req.url}`);
        }
      }),
    );
    const agent = track(new Agent().compose(redirectThenCache()));
    expect((await get(agent, trusted.origin, '/x')).body).toBe('evil');
    // The final answer of /a comes from the trusted origin, but the chain went through the attacker.
    expect((await get(agent, trusted.origin, '/a')).body).toBe('good /c');
    trustedRoute = 'own';
    expect((await get(agent, trusted.origin, '/x')).body).toBe('good /x');
    expect((await get(agent, trusted.origin, '/a')).body).toBe('good /a');
  });

  it('revalidates only against the origin that stored the response', async () => {
    // Alice's document is public but must be revalidated; anonymous callers are sent to a login
    // page on another origin, which answers every request with 304.
    const other = track(
      await countingOrigin((_req, res) => {
        res.writeHead(304).end();
      }),
    );
    const site = track(
      await countingOrigin((req, res) => {
        if (req.headers.authorization === 'alice') {
          res.writeHead(200, { 'cache-control': 'public, no-cache', etag: '"v1"' }).end('alice secret');
        } else {
          res.writeHead(302, { location: `${other.origin}/login` }).end();
        }
      }),
    );
    const agent = track(new Agent().compose(redirectThenCache()));
    expect((await get(agent, site.origin, '/doc', { authorization: 'alice' })).body).toBe('alice secret');
    const anonymous = await get(agent, site.origin, '/doc');
    expect(anonymous.body).not.toContain('alice');
    expect(anonymous.status).toBe(304);
    // The stored response's validators never left its origin.
    expect(other.seen.map((s) => s.headers['if-none-match'])).toEqual(other.seen.map(() => undefined));
    expect(other.hits).toBeGreaterThan(0);
  });

  it('an error from another origin does not let a stored response stand in (stale-if-error)', async () => {
    const other = track(await countingOrigin((_req, res) => void res.writeHead(503).end('login is down')));
    let loginAt = other.origin;
    const site = track(
      await countingOrigin((req, res) => {
        if (req.headers.authorization === 'alice') {
          res.writeHead(200, { 'cache-control': 'public, no-cache, stale-if-error=600', etag: '"v1"' }).end('alice secret');
        } else {
          res.writeHead(302, { location: `${loginAt}/login` }).end();
        }
      }),
    );
    const agent = track(new Agent().compose(redirectThenCache()));
    expect((await get(agent, site.origin, '/doc', { authorization: 'alice' })).body).toBe('alice secret');
    expect(await get(agent, site.origin, '/doc')).toMatchObject({ status: 503, body: 'login is down' });
    // The same when the other origin cannot be reached at all.
    const closed = await countingOrigin(() => {});
    loginAt = closed.origin;
    await closed.close();
    await expect(get(agent, site.origin, '/doc')).rejects.toThrow();
  });

  it('a revalidation redirected within the origin is not validated by the other URL', async () => {
    let moved = false;
    const origin = track(
      await countingOrigin((req, res, hit) => {
        if (req.url === '/doc' && moved) res.writeHead(302, { location: '/elsewhere' }).end();
        else if (req.headers['if-none-match'] !== undefined) res.writeHead(304, { etag: '"v1"' }).end();
        else res.writeHead(200, { 'cache-control': 'no-cache', etag: '"v1"' }).end(`${req.url} ${hit}`);
      }),
    );
    const agent = track(new Agent().compose(redirectThenCache()));
    expect((await get(agent, origin.origin, '/doc')).body).toBe('/doc 1');
    moved = true;
    expect((await get(agent, origin.origin, '/doc')).body).toBe('/elsewhere 3');
    expect(origin.seen[2]?.headers['if-none-match']).toBeUndefined();
  });
});

describe('Set-Cookie', () => {
  const withCookie = async () =>
    track(
      await countingOrigin((_req, res, hit) => {
        res.writeHead(200, { 'cache-control': 'max-age=600', 'set-cookie': `session=${hit}` }).end(`hello ${hit}`);
      }),
    );

  it('a shared cache neither stores nor replays it', async () => {
    const origin = await withCookie();
    const store = new cacheStores.MemoryCacheStore();
    const shared = track(new Agent().compose(interceptors.cache({ store })));
    expect((await get(shared, origin.origin, '/')).headers['set-cookie']).toBe('session=1');
    const second = await get(shared, origin.origin, '/');
    expect(second.headers['set-cookie']).toBe('session=2');
    expect(origin.hits).toBe(2);

    // An entry with a cookie already in the store (written by a private cache sharing it) is not replayed.
    const privateCache = track(new Agent().compose(interceptors.cache({ store, type: 'private' })));
    expect((await get(privateCache, origin.origin, '/p')).headers['set-cookie']).toBe('session=3');
    expect((await get(shared, origin.origin, '/p')).headers['set-cookie']).toBe('session=4');
  });

  it('a private cache stores and replays it (one user)', async () => {
    const origin = await withCookie();
    const privateCache = track(new Agent().compose(interceptors.cache({ type: 'private' })));
    await get(privateCache, origin.origin, '/');
    const again = await get(privateCache, origin.origin, '/');
    expect(again).toMatchObject({ body: 'hello 1', headers: { 'set-cookie': 'session=1' } });
    expect(origin.hits).toBe(1);
  });
});

describe('the origin a response is filed under', () => {
  const single: [string, (origin: string) => Dispatcher][] = [
    ['Client', (o) => new Client(o)],
    ['Pool', (o) => new Pool(o)],
    ['RoundRobinPool', (o) => new RoundRobinPool(o)],
    ['RetryAgent over a Client', (o) => new RetryAgent(new Client(o))],
  ];

  it("a dispatcher with one origin files what it answered under that origin, whatever the request's origin says", async () => {
    for (const [name, make] of single) {
      const a = track(await countingOrigin((_req, res) => void res.writeHead(200, { 'cache-control': 'max-age=600' }).end('from A')));
      const b = track(await countingOrigin((_req, res) => void res.writeHead(200, { 'cache-control': 'max-age=600' }).end('from B')));
      const store = new cacheStores.MemoryCacheStore();
      const own = track(make(a.origin).compose(interceptors.cache({ store })));
      expect((await get(own, b.origin, '/data')).body, name).toBe('from A');
      const agent = track(new Agent().compose(interceptors.cache({ store })));
      expect((await get(agent, b.origin, '/data')).body, name).toBe('from B');
      expect((await get(own, a.origin, '/data')).body, name).toBe('from A');
      expect(a.hits, name).toBe(1);
    }
  });

  it('a BalancedPool, whose requests go to any of its upstreams, caches nothing', async () => {
    const a = track(await countingOrigin((_req, res, hit) => void res.writeHead(200, { 'cache-control': 'max-age=600' }).end(`A ${hit}`)));
    const b = track(await countingOrigin((_req, res) => void res.writeHead(200, { 'cache-control': 'max-age=600' }).end('from B')));
    const store = new cacheStores.MemoryCacheStore();
    const balanced = track(new BalancedPool([a.origin]).compose(interceptors.cache({ store })));
    expect((await get(balanced, b.origin, '/data')).body).toBe('A 1');
    expect((await get(balanced, b.origin, '/data')).body).toBe('A 2');
    expect(store.count).toBe(0);
  });

  it("caches requests on a Client or Pool whose origin is not a URL ('localhost'), matching origins case-insensitively", async () => {
    for (const make of [(o: string) => new Client(o), (o: string) => new Pool(o)]) {
      const origin = track(
        await countingOrigin((_req, res, hit) => void res.writeHead(200, { 'cache-control': 'max-age=600' }).end(`hit ${hit}`)),
      );
      const listed = `${origin.origin.toUpperCase()}/`;
      const cached = track(make(origin.origin).compose(interceptors.cache({ origins: [listed] })));
      expect((await get(cached, 'localhost', '/')).body).toBe('hit 1');
      expect((await get(cached, 'localhost', '/')).body).toBe('hit 1');
      expect(origin.hits).toBe(1);
    }
  });

  it("judges redirect chains on a Client whose requests name 'localhost' as on any other", async () => {
    const origin = track(
      await countingOrigin((req, res) => {
        if (req.url === '/me') {
          if (req.headers.cookie === undefined) res.writeHead(401).end('who are you?');
          else res.writeHead(302, { location: '/users/alice', 'cache-control': 'max-age=600' }).end();
        } else if (req.url === '/old') {
          res.writeHead(301, { location: '/new', 'cache-control': 'max-age=600' }).end();
        } else {
          res.writeHead(200, { 'cache-control': 'public, max-age=600' }).end(`page ${req.url}`);
        }
      }),
    );
    const client = track(new Client(origin.origin).compose(redirectThenCache()));
    expect((await get(client, 'localhost', '/me', { cookie: 'alice' })).body).toBe('page /users/alice');
    expect(await get(client, 'localhost', '/me')).toMatchObject({ status: 401 });
    // A chain within the origin, with no credentials: cached (the redirect below learns the real origin).
    const before = origin.hits;
    expect((await get(client, 'localhost', '/old')).body).toBe('page /new');
    expect((await get(client, 'localhost', '/old')).body).toBe('page /new');
    expect(origin.hits - before).toBe(2);
  });
});

describe('compose order', () => {
  const message =
    "the cache interceptor must be composed after the redirect interceptor; composing the cache before the redirect disables the cache's cross-origin and credential redirect guards (GHSA-75VM-9G8F-99J4, GHSA-MQG3-3V4R-CM32, GHSA-4W7W-5XRC-9H26, GHSA-7XG3-FPHP-28HG)";

  it('refuses the cache before the redirect, with deduplicate on either side', () => {
    const agent = track(new Agent());
    const { cache, redirect, deduplicate } = interceptors;
    for (const list of [
      [cache(), redirect()],
      [cache(), deduplicate(), redirect()],
      [deduplicate(), cache(), redirect(), deduplicate()],
    ]) {
      expect(() => agent.compose(list)).toThrow(errors.InvalidArgumentError);
      expect(() => agent.compose(...list)).toThrow(message);
    }
    for (const list of [
      [redirect(), cache()],
      [redirect(), deduplicate(), cache()],
      [deduplicate(), redirect(), cache(), deduplicate()],
      [cache()],
      [redirect()],
    ]) {
      expect(() => agent.compose(list)).not.toThrow();
    }
  });
});
