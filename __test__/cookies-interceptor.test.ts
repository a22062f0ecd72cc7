// interceptors.cookies against real local servers: every API and dispatcher, the request's own
// cookie header, and redirects (a 302's Set-Cookie reaches its target) with the redirect
// interceptor composed on either side, across two servers on two hosts (127.0.0.1, localhost).
import { describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { Agent, Client, CookieJar, Pool, errors, fetch, interceptors, type Dispatcher } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A server answering by path; `cookies` lists the cookie header of each request (or '-'). */
async function server(routes: Record<string, Route>) {
  const cookies: string[] = [];
  const s = await httpServer((req, res) => {
    cookies.push(`${req.url} ${req.headers.cookie ?? '-'}`);
    const route = routes[new URL(req.url!, 'http://x').pathname];
    if (route) route(req, res);
    else res.end('ok');
  });
  return Object.assign(track(s), { cookies, local: `http://localhost:${s.port}` });
}

const setting = (...values: string[]): Route => (_req, res) => {
  res.setHeader('set-cookie', values);
  res.end('set');
};

const redirecting = (location: string, ...values: string[]): Route => (_req, res) => {
  res.writeHead(302, { location, 'set-cookie': values });
  res.end('moved');
};

describe('cookies: every API', () => {
  it('stores Set-Cookie and sends the cookies back (request)', async () => {
    const s = await server({ '/login': setting('sid=abc; Path=/', 'theme=dark; Path=/app') });
    const jar = new CookieJar();
    const agent = track(new Agent().compose(interceptors.cookies({ jar })));
    await (await agent.request({ origin: s.origin, path: '/login', method: 'GET' })).body.text();
    await (await agent.request({ origin: s.origin, path: '/app/page', method: 'GET' })).body.text();
    await (await agent.request({ origin: s.origin, path: '/other', method: 'GET' })).body.text();
    expect(s.cookies).toEqual(['/login -', '/app/page theme=dark; sid=abc', '/other sid=abc']);
    expect(jar.getCookies(`${s.origin}/`).map((c) => c.name)).toEqual(['sid']);
  });

  it('works for stream, dispatch, pipeline and fetch, and on a Client and a Pool', async () => {
    const s = await server({ '/set': setting('a=1') });
    const jar = new CookieJar();
    const cookies = interceptors.cookies({ jar });
    const client = track(new Client(s.origin).compose(cookies));
    await (await client.request({ path: '/set', method: 'GET' })).body.text();
    await client.stream({ path: '/stream', method: 'GET' }, () => new Writable({ write: (_c, _e, cb) => cb() }));
    await new Promise<void>((resolve, reject) => {
      client.dispatch(
        { path: '/dispatch', method: 'GET' },
        { onResponseEnd: () => resolve(), onResponseError: (_c: unknown, err: Error) => reject(err) } as Dispatcher.DispatchHandler,
      );
    });
    await new Promise<void>((resolve, reject) => {
      const duplex = client.pipeline({ path: '/pipeline', method: 'GET' }, ({ body }) => body);
      duplex.on('data', () => undefined).on('end', resolve).on('error', reject);
      duplex.end();
    });
    const pool = track(new Pool(s.origin).compose(cookies));
    await (await pool.request({ path: '/pool', method: 'GET' })).body.text();
    const agent = track(new Agent().compose(cookies));
    const res = await fetch(`${s.origin}/fetch`, { dispatcher: agent });
    await res.text();
    expect(s.cookies).toEqual(['/set -', '/stream a=1', '/dispatch a=1', '/pipeline a=1', '/pool a=1', '/fetch a=1']);
  });

  it('stores the cookies of a response fetch receives', async () => {
    const s = await server({ '/set': setting('f=1; HttpOnly') });
    const jar = new CookieJar();
    const agent = track(new Agent().compose(interceptors.cookies({ jar })));
    await (await fetch(`${s.origin}/set`, { dispatcher: agent })).text();
    expect(jar.getCookieString(`${s.origin}/`)).toBe('f=1');
  });

  it("fetch's own redirects: a 302's cookie reaches its target", async () => {
    const s = await server({ '/login': redirecting('/home', 'sid=abc') });
    const agent = track(new Agent().compose(interceptors.cookies({ jar: new CookieJar() })));
    const res = await fetch(`${s.origin}/login`, { dispatcher: agent });
    expect([res.redirected, await res.text()]).toEqual([true, 'ok']);
    expect(s.cookies).toEqual(['/login -', '/home sid=abc']);
  });

  it('sends cookies with an upgrade request and stores the Set-Cookie of its 101', async () => {
    const s = await server({});
    const upgrades: string[] = [];
    s.server.on('upgrade', (req: IncomingMessage, socket: import('node:net').Socket) => {
      upgrades.push(req.headers.cookie ?? '-');
      socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\nSet-Cookie: up=1\r\n\r\n');
    });
    const jar = new CookieJar();
    jar.setCookie('before=1', s.origin);
    const agent = track(new Agent().compose(interceptors.cookies({ jar })));
    const { socket } = await agent.upgrade({ origin: s.origin, path: '/up', protocol: 'echo' });
    socket.destroy();
    expect(upgrades).toEqual(['before=1']);
    expect(jar.getCookieString(`${s.origin}/`)).toBe('before=1; up=1');
  });

  it('keeps the request own cookie header, appends the jar on the same line, and never stores it', async () => {
    const s = await server({ '/set': setting('jar=1') });
    const jar = new CookieJar();
    const agent = track(new Agent().compose(interceptors.cookies({ jar })));
    await (await agent.request({ origin: s.origin, path: '/set', method: 'GET' })).body.text();
    const sent: string[][] = [];
    s.server.on('request', (req: IncomingMessage) => sent.push(req.rawHeaders.filter((_v, i, all) => all[i - 1]?.toLowerCase() === 'cookie')));
    await (await agent.request({ origin: s.origin, path: '/a', method: 'GET', headers: { cookie: 'mine=x' } })).body.text();
    await (await agent.request({ origin: s.origin, path: '/b', method: 'GET', headers: ['Cookie', 'one=1', 'cookie', 'two=2'] })).body.text();
    expect(s.cookies.slice(1)).toEqual(['/a mine=x; jar=1', '/b one=1; two=2; jar=1']);
    expect(sent).toEqual([['mine=x; jar=1'], ['one=1; two=2; jar=1']]);
    expect(jar.getCookieString(`${s.origin}/`)).toBe('jar=1');
  });

  it('leaves the headers alone when the jar has nothing for the URL', async () => {
    const s = await server({});
    const agent = track(new Agent().compose(interceptors.cookies({ jar: new CookieJar() })));
    await (await agent.request({ origin: s.origin, path: '/a', method: 'GET', headers: { cookie: 'mine=x' } })).body.text();
    await (await agent.request({ origin: s.origin, path: '/b', method: 'GET' })).body.text();
    expect(s.cookies).toEqual(['/a mine=x', '/b -']);
  });

  it('does not send a host its neighbour cookies through a path that names another host', async () => {
    const s = await server({});
    const jar = new CookieJar();
    jar.setCookie('secret=1', 'http://elsewhere.test/');
    const agent = track(new Agent().compose(interceptors.cookies({ jar })));
    await (await agent.request({ origin: s.origin, path: '//elsewhere.test/x', method: 'GET' })).body.text();
    expect(s.cookies).toEqual(['//elsewhere.test/x -']);
  });

  it('refuses options without a CookieJar', () => {
    expect(() => interceptors.cookies({} as never)).toThrow(errors.InvalidArgumentError);
    expect(() => interceptors.cookies(undefined as never)).toThrow(errors.InvalidArgumentError);
    expect(() => interceptors.cookies({ jar: {} as never })).toThrow(errors.InvalidArgumentError);
  });
});

// compose(a, b): b is outermost. 'cookies outside' = the redirect interceptor handles the hops
// below the cookies interceptor; 'cookies inside' = every hop passes through it.
const orders: [string, (jar: CookieJar) => Dispatcher][] = [
  ['cookies outside redirect', (jar) => new Agent().compose(interceptors.redirect({ maxRedirections: 5 }), interceptors.cookies({ jar }))],
  ['cookies inside redirect', (jar) => new Agent().compose(interceptors.cookies({ jar }), interceptors.redirect({ maxRedirections: 5 }))],
];

for (const [order, make] of orders) {
  describe(`cookies and redirects (${order})`, () => {
    it("sends a 302's cookie to its target", async () => {
      const s = await server({ '/login': redirecting('/home', 'sid=abc') });
      const jar = new CookieJar();
      const agent = track(make(jar));
      const res = await agent.request({ origin: s.origin, path: '/login', method: 'GET' });
      expect(await res.body.text()).toBe('ok');
      expect(s.cookies).toEqual(['/login -', '/home sid=abc']);
    });

    it('keeps each host its own cookies across two servers (127.0.0.1 and localhost)', async () => {
      const b = await server({ '/land': redirecting('/final', 'b=1') });
      const a = await server({ '/start': redirecting(`${b.local}/land`, 'a=1'), '/back': (_q, res) => res.end('back') });
      const jar = new CookieJar();
      const agent = track(make(jar));
      const res = await agent.request({ origin: a.origin, path: '/start', method: 'GET', headers: { cookie: 'own=1' } });
      expect(await res.body.text()).toBe('ok');
      // The request's own cookie stays on its origin; the jar's go to their host only.
      expect(a.cookies).toEqual(['/start own=1']);
      expect(b.cookies).toEqual(['/land -', '/final b=1']);
      await (await agent.request({ origin: a.origin, path: '/back', method: 'GET' })).body.text();
      expect(a.cookies[1]).toBe('/back a=1');
      expect(jar.getCookieString(`${b.local}/`)).toBe('b=1');
    });

    it('keeps the request own cookie on a same-origin hop, with the jar cookies for the new path', async () => {
      const s = await server({ '/a': redirecting('/deep/b', 'deep=1; Path=/deep') });
      const agent = track(make(new CookieJar()));
      await (await agent.request({ origin: s.origin, path: '/a', method: 'GET', headers: { cookie: 'own=1' } })).body.text();
      expect(s.cookies).toEqual(['/a own=1', '/deep/b own=1; deep=1']);
    });

    it("does not carry the first URL's jar cookies to a hop whose path they do not cover", async () => {
      const s = await server({ '/a/go': redirecting('/b') });
      const jar = new CookieJar();
      jar.setCookie('scoped=1; Path=/a', `${s.origin}/a/`);
      const agent = track(make(jar));
      await (await agent.request({ origin: s.origin, path: '/a/go', method: 'GET' })).body.text();
      await (await agent.request({ origin: s.origin, path: '/a/go', method: 'GET', headers: { cookie: 'own=1' } })).body.text();
      expect(s.cookies).toEqual(['/a/go scoped=1', '/b -', '/a/go own=1; scoped=1', '/b own=1']);
    });

    it('treats a hop that left the first site as cross-site: no Strict cookies there', async () => {
      const b = await server({ '/set': setting('strict=1; SameSite=Strict', 'lax=1; SameSite=Lax') });
      const a = await server({ '/go': redirecting(`${b.local}/target`) });
      const jar = new CookieJar();
      const agent = track(make(jar));
      await (await agent.request({ origin: b.local, path: '/set', method: 'GET' })).body.text();
      await (await agent.request({ origin: a.origin, path: '/go', method: 'GET' })).body.text();
      await (await agent.request({ origin: b.local, path: '/direct', method: 'GET' })).body.text();
      expect(b.cookies).toEqual(['/set -', '/target lax=1', '/direct strict=1; lax=1']);
    });
  });
}
