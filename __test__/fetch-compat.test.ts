// fetch as undici's behaves where its own tests pin it down: Response.bytes(), responses that
// have no body (HEAD, null-body statuses), the request headers fetch adds, and the Referer header
// under each referrer policy. Each scenario runs against a real loopback server.
import { describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, interceptors, setGlobalOrigin } from '../ts/index.js';
import { fetch, type FetchInit } from '../ts/fetch/fetch.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const serve = async (...args: Parameters<typeof servers.httpServer>) => cleanup.track(await servers.httpServer(...args));

function agent(): Agent {
  const a = new Agent();
  cleanup.push(() => a.destroy());
  return a;
}

const fetchWith = (url: string, init: FetchInit = {}): Promise<Response> => fetch(url, { dispatcher: agent(), ...init });

describe('Response.bytes()', () => {
  it('returns the body as a Uint8Array of its own buffer', async () => {
    const srv = await serve((_req, res) => res.end('hello bytes'));
    const bytes = await (await fetchWith(srv.origin)).bytes();
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).toString()).toBe('hello bytes');
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
  });

  it('returns the decoded body, and the body once read is used', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync('x'.repeat(100_000)));
    });
    const res = await fetchWith(srv.origin);
    const bytes = await res.bytes();
    expect(bytes.byteLength).toBe(100_000);
    expect(bytes.every((b) => b === 0x78)).toBe(true);
    expect(res.bodyUsed).toBe(true);
    await expect(res.bytes()).rejects.toThrow(TypeError);
  });

  it('reads a body whose stream was touched, and a clone', async () => {
    const srv = await serve((_req, res) => res.end('abc'));
    const res = await fetchWith(srv.origin);
    const copy = res.clone();
    expect(Buffer.from(await res.bytes()).toString()).toBe('abc');
    expect(Buffer.from(await copy.bytes()).toString()).toBe('abc');
  });
});

describe('responses without a body', () => {
  it.each([
    ['HEAD', 200],
    ['GET', 204],
    ['GET', 205],
    ['GET', 304],
  ])('%s answered %i has a null body, as undici’s fetch gives', async (method, status) => {
    const srv = await serve((_req, res) => {
      res.writeHead(status, { 'content-length': status === 200 ? '5' : '0' });
      res.end();
    });
    const res = await fetchWith(srv.origin, { method });
    expect(res.status).toBe(status);
    expect(res.body).toBeNull();
    expect(res.bodyUsed).toBe(false);
    expect(await res.text()).toBe('');
    expect((await res.bytes()).byteLength).toBe(0);
    // A body that is null is never used: it can be read again and cloned.
    expect(res.clone().body).toBeNull();
  });

  it('a HEAD response leaves the connection reusable', async () => {
    let sockets = 0;
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '5', 'x-port': String(req.socket.remotePort) });
      res.end(req.method === 'HEAD' ? undefined : 'hello');
    });
    srv.server.on('connection', () => sockets++);
    const d = agent();
    const head = await fetch(srv.origin, { dispatcher: d, method: 'HEAD' });
    expect(head.body).toBeNull();
    const get = await fetch(srv.origin, { dispatcher: d });
    expect(await get.text()).toBe('hello');
    expect(sockets).toBe(1);
  });
});

describe('the request headers fetch adds', () => {
  /** A server that answers with the request's method and headers as JSON. */
  async function echo(): Promise<string> {
    const srv = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ method: req.method, headers: req.headers })));
    });
    return srv.origin;
  }
  const sent = async (url: string, init: FetchInit = {}): Promise<IncomingHttpHeaders> => {
    const res = await fetchWith(url, init);
    return ((await res.json()) as { headers: IncomingHttpHeaders }).headers;
  };

  it('a plain GET sends undici’s defaults', async () => {
    const headers = await sent(await echo());
    expect(headers).toMatchObject({
      accept: '*/*',
      'accept-language': '*',
      'user-agent': 'undici',
      'accept-encoding': 'gzip, deflate',
      // 127.0.0.1 is a potentially trustworthy origin, so the fetch metadata header goes too.
      'sec-fetch-mode': 'cors',
    });
    expect(headers['content-length']).toBeUndefined();
    expect(headers.referer).toBeUndefined();
  });

  it('the same through a Request, with its mode', async () => {
    const url = await echo();
    const headers = await sent(url, { headers: { 'x-a': '1' }, mode: 'no-cors' });
    expect(headers).toMatchObject({ 'x-a': '1', 'user-agent': 'undici', 'sec-fetch-mode': 'no-cors', accept: '*/*' });
    const viaRequest = await (await fetch(new Request(url, { mode: 'same-origin' }), { dispatcher: agent() })).json();
    expect((viaRequest as { headers: IncomingHttpHeaders }).headers['sec-fetch-mode']).toBe('same-origin');
  });

  it('the caller’s values win, except Sec-Fetch-Mode, which is the mode', async () => {
    const headers = await sent(await echo(), {
      headers: { accept: 'text/plain', 'user-agent': 'mine', 'accept-encoding': 'identity', 'sec-fetch-mode': 'navigate' },
    });
    expect(headers).toMatchObject({ accept: 'text/plain', 'user-agent': 'mine', 'accept-encoding': 'identity', 'sec-fetch-mode': 'cors' });
  });

  it('over https the defaults offer br and zstd too', async () => {
    const tls = (name: string): string => readFileSync(join(import.meta.dirname, 'fixtures', 'tls', name), 'utf8');
    const server = https.createServer({ key: tls('localhost.key'), cert: tls('localhost.pem') }, (req, res) =>
      res.end(JSON.stringify({ headers: req.headers })),
    );
    const { origin } = cleanup.track(await servers.listen(server));
    const d = new Agent({ connect: { ca: tls('ca.pem'), servername: 'localhost' } });
    cleanup.push(() => d.destroy());
    const res = await fetch(origin.replace('http:', 'https:'), { dispatcher: d });
    const { headers } = (await res.json()) as { headers: IncomingHttpHeaders };
    expect(headers['accept-encoding']).toBe('br, gzip, deflate, zstd');
    expect(headers['sec-fetch-mode']).toBe('cors');
  });

  it('no Sec-Fetch-Mode to a host that is not potentially trustworthy', async () => {
    const url = (await echo()).replace('127.0.0.1', 'ferro-test.invalid');
    const d = agent().compose(interceptors.dns({ lookup: (_o, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) }));
    const res = await fetch(url, { dispatcher: d });
    const { headers } = (await res.json()) as { headers: IncomingHttpHeaders };
    expect(headers['sec-fetch-mode']).toBeUndefined();
    expect(headers['user-agent']).toBe('undici');
  });

  it('Content-Length: the length of a string body, 0 for a POST or PUT without one', async () => {
    const url = await echo();
    expect((await sent(url, { method: 'POST', body: 'héllo' }))['content-length']).toBe('6');
    expect((await sent(url, { method: 'POST', body: '' }))['content-length']).toBe('0');
    expect((await sent(url, { method: 'POST' }))['content-length']).toBe('0');
    expect((await sent(url, { method: 'PUT' }))['content-length']).toBe('0');
    expect((await sent(url, { method: 'DELETE' }))['content-length']).toBeUndefined();
    // Given explicitly, it is sent once.
    expect((await sent(url, { method: 'POST', body: 'a+b+c', headers: { 'content-length': '5' } }))['content-length']).toBe('5');
  });

  it('a Range request asks for the identity coding', async () => {
    const url = await echo();
    expect((await sent(url, { headers: { range: 'bytes=0-1' } }))['accept-encoding']).toBe('identity');
    expect((await sent(url, { headers: { range: 'bytes=0-1', 'accept-encoding': 'gzip' } }))['accept-encoding']).toBe('gzip, identity');
  });

  it('cache modes and conditional headers add Pragma / Cache-Control', async () => {
    const url = await echo();
    expect(await sent(url, { cache: 'no-store' })).toMatchObject({ pragma: 'no-cache', 'cache-control': 'no-cache' });
    expect(await sent(url, { cache: 'reload' })).toMatchObject({ pragma: 'no-cache', 'cache-control': 'no-cache' });
    const noCache = await sent(url, { cache: 'no-cache' });
    expect(noCache['cache-control']).toBe('max-age=0');
    expect(noCache.pragma).toBeUndefined();
    expect(await sent(url, { headers: { 'if-none-match': '"x"' } })).toMatchObject({ pragma: 'no-cache', 'cache-control': 'no-cache' });
    const plain = await sent(url);
    expect(plain.pragma).toBeUndefined();
    expect(plain['cache-control']).toBeUndefined();
  });

  it('a Host header of the caller’s is not sent: the URL names the host', async () => {
    const url = await echo();
    expect((await sent(url, { headers: { host: 'elsewhere.example' } })).host).toBe(new URL(url).host);
  });
});

describe('Referer and referrer policies', () => {
  /** Redirects /redirect to /target (with `policy` as its Referrer-Policy) and reports the Referer /target got. */
  async function redirecting(policy: string | null): Promise<{ origin: string; referer: Promise<string | undefined> }> {
    let got!: (value: string | undefined) => void;
    const referer = new Promise<string | undefined>((resolve) => (got = resolve));
    const srv = await serve((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/target', ...(policy === null ? {} : { 'referrer-policy': policy }) });
        res.end();
        return;
      }
      got(req.headers.referer);
      res.end();
    });
    return { origin: srv.origin, referer };
  }

  // undici's test/fetch/referrrer-policy.js: the redirect's header sets the policy for the next hop.
  it.each([
    ['origin, asdas, asdaw34, no-referrer,,', 'no-referrer'],
    ['origin', 'origin'],
    ['asdas, origin', 'origin'],
    ['no-referrer, asdas, origin, 0943sd', 'origin'],
    ['origin, asdas, asdaw34', 'origin'],
    [null, 'strict-origin-when-cross-origin'],
    ['asdasd', 'strict-origin-when-cross-origin'],
    ['asdasd, asdasa, 12daw,', 'strict-origin-when-cross-origin'],
    ['no-referrer', 'no-referrer'],
    ['strict-origin-when-cross-origin', 'strict-origin-when-cross-origin'],
    ['unsafe-url', 'unsafe-url'],
  ])('Referrer-Policy %j on the redirect acts as %s', async (policy, expected) => {
    const { origin, referer } = await redirecting(policy);
    await fetchWith(`${origin}/redirect`, { referrer: `${origin}/index.html?test=1` });
    const want = expected === 'no-referrer' ? undefined : expected === 'origin' ? `${origin}/` : `${origin}/index.html?test=1`;
    expect(await referer).toBe(want);
  });

  /** The Referer a fetch of `target` sends with `referrer` under `policy`. */
  async function refererFor(target: string, referrer: string, referrerPolicy: ReferrerPolicy): Promise<string | undefined> {
    const res = await fetchWith(target, { referrer, referrerPolicy });
    return ((await res.json()) as { headers: IncomingHttpHeaders }).headers.referer;
  }

  it('each policy, same-origin and cross-origin, without credentials or fragment', async () => {
    const srv = await serve((req, res) => res.end(JSON.stringify({ headers: req.headers })));
    const target = `${srv.origin}/page`;
    const same = `${srv.origin}/from/here?q=1#frag`;
    const other = 'http://other.example:8080/from/there?q=2';
    const cases: [ReferrerPolicy, string | undefined, string | undefined][] = [
      ['no-referrer', undefined, undefined],
      ['origin', `${srv.origin}/`, 'http://other.example:8080/'],
      ['unsafe-url', `${srv.origin}/from/here?q=1`, other],
      ['same-origin', `${srv.origin}/from/here?q=1`, undefined],
      ['origin-when-cross-origin', `${srv.origin}/from/here?q=1`, 'http://other.example:8080/'],
      ['strict-origin', `${srv.origin}/`, 'http://other.example:8080/'],
      ['strict-origin-when-cross-origin', `${srv.origin}/from/here?q=1`, 'http://other.example:8080/'],
      ['no-referrer-when-downgrade', `${srv.origin}/from/here?q=1`, other],
      ['', `${srv.origin}/from/here?q=1`, 'http://other.example:8080/'],
    ];
    for (const [policy, fromSame, fromOther] of cases) {
      expect([policy, await refererFor(target, same, policy)]).toEqual([policy, fromSame]);
      expect([policy, await refererFor(target, other, policy)]).toEqual([policy, fromOther]);
    }
  });

  it('an https referrer is not sent to a plain-http URL that is not trustworthy (a downgrade)', async () => {
    const srv = await serve((req, res) => res.end(JSON.stringify({ headers: req.headers })));
    const d = agent().compose(interceptors.dns({ lookup: (_o, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) }));
    const target = srv.origin.replace('127.0.0.1', 'ferro-test.invalid');
    const referer = async (referrerPolicy: ReferrerPolicy): Promise<string | undefined> => {
      const res = await fetch(target, { dispatcher: d, referrer: 'https://secure.example/a?b', referrerPolicy });
      return ((await res.json()) as { headers: IncomingHttpHeaders }).headers.referer;
    };
    expect(await referer('strict-origin-when-cross-origin')).toBeUndefined();
    expect(await referer('strict-origin')).toBeUndefined();
    expect(await referer('no-referrer-when-downgrade')).toBeUndefined();
    expect(await referer('origin')).toBe('https://secure.example/');
    expect(await referer('unsafe-url')).toBe('https://secure.example/a?b');
  });

  it('with a global origin, a request that names no referrer has it as its referrer', async () => {
    const srv = await serve((req, res) => res.end(JSON.stringify({ headers: req.headers })));
    const referer = async (url: string, init: FetchInit = {}): Promise<string | undefined> =>
      ((await (await fetchWith(url, init)).json()) as { headers: IncomingHttpHeaders }).headers.referer;
    setGlobalOrigin(`${srv.origin}/base/page?x=1#f`);
    try {
      expect(await referer(`${srv.origin}/t`)).toBe(`${srv.origin}/base/page?x=1`);
      expect(await referer(`${srv.origin}/t`, { headers: { 'x-a': '1' } })).toBe(`${srv.origin}/base/page?x=1`);
      expect(await referer(`${srv.origin}/t`, { referrerPolicy: 'origin' })).toBe(`${srv.origin}/`);
      expect(await referer(`${srv.origin}/t`, { referrer: '' })).toBeUndefined();
      // Relative to the global origin.
      expect(await referer('/t')).toBe(`${srv.origin}/base/page?x=1`);
    } finally {
      setGlobalOrigin(undefined);
    }
    expect(await referer(`${srv.origin}/t`)).toBeUndefined();
  });

  it('no Referer without a referrer, or with referrer "" ', async () => {
    const srv = await serve((req, res) => res.end(JSON.stringify({ headers: req.headers })));
    for (const init of [{}, { referrer: '' }, { referrer: 'about:client' }]) {
      const res = await fetchWith(srv.origin, init);
      expect(((await res.json()) as { headers: IncomingHttpHeaders }).headers.referer).toBeUndefined();
    }
  });
});

describe('content codings (undici’s test/fetch/encoding.js)', () => {
  const text = 'Hello, World!';

  it('a chain of codings is undone last-applied first, whatever the header’s case', async () => {
    // deflate applied first, then gzip: "deflate, gzip".
    const body = zlib.gzipSync(zlib.deflateSync(text));
    for (const coding of ['deflate, gzip', 'DeFlAtE, GzIp']) {
      const srv = await serve((_req, res) => {
        res.writeHead(200, { 'content-encoding': coding, 'content-type': 'text/plain' });
        res.end(body);
      });
      const res = await fetchWith(srv.origin);
      expect(res.headers.get('content-encoding')).toBe(coding);
      expect(await res.text()).toBe(text);
    }
  });

  it('five codings are decoded; a sixth fails the fetch naming content-encoding', async () => {
    // gzip layers, not undici's `identity` ones: ferro's limit counts codings that cost work
    // (docs/compatibility.md).
    const srv = await serve((req, res) => {
      const layers = Math.min(Number(req.headers['x-count']), 6);
      let body = Buffer.from('test');
      for (let i = 0; i < layers; i++) body = zlib.gzipSync(body);
      res.writeHead(200, { 'content-encoding': Array(Number(req.headers['x-count'])).fill('gzip').join(', ') });
      res.end(body);
    });
    expect(await (await fetchWith(srv.origin, { headers: { 'x-count': '5' } })).text()).toBe('test');
    for (const count of ['6', '100']) {
      const err = await fetchWith(srv.origin, { headers: { 'x-count': count } }).then(
        () => null,
        (e: unknown) => e as TypeError,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect(String((err!.cause as Error).message)).toContain('content-encoding');
    }
  });
});

describe('request modes across redirects', () => {
  it('a same-origin request redirected to another origin fails; within its origin it follows', async () => {
    const other = await serve((_req, res) => res.end('elsewhere'));
    const srv = await serve((req, res) => {
      if (req.url === '/away') res.writeHead(302, { location: `${other.origin}/` }).end();
      else if (req.url === '/near') res.writeHead(302, { location: '/here' }).end();
      else res.end('here');
    });
    const err = await fetchWith(`${srv.origin}/away`, { mode: 'same-origin' }).then(
      () => null,
      (e: unknown) => e as TypeError,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect((err!.cause as Error).message).toBe('request mode cannot be "same-origin"');
    expect(await (await fetchWith(`${srv.origin}/near`, { mode: 'same-origin' })).text()).toBe('here');
    expect(await (await fetchWith(`${srv.origin}/away`, { mode: 'cors' })).text()).toBe('elsewhere');
  });
});

describe('the request target', () => {
  // undici's test/fetch/issue-4836.js.
  it.each([
    ['/echo', '/echo'],
    ['/echo?', '/echo?'],
    ['/echo?a=b', '/echo?a=b'],
    ['/echo?a=b&c=d', '/echo?a=b&c=d'],
    ['/echo?#frag', '/echo?'],
    ['/echo#?', '/echo'],
    ['/echo#frag?bar', '/echo'],
  ])('%s is sent as %s, with or without a Request', async (path, expected) => {
    const srv = await serve((req, res) => res.end(req.url));
    expect(await (await fetchWith(`${srv.origin}${path}`)).text()).toBe(expected);
    expect(await (await fetchWith(`${srv.origin}${path}`, { method: 'POST', body: 'x' })).text()).toBe(expected);
  });
});

describe('the Origin header', () => {
  it('none without a global origin, for a POST either (undici issue rsshub-15532)', async () => {
    const srv = await serve((req, res) => res.end(JSON.stringify({ headers: req.headers })));
    const res = await fetchWith(srv.origin, { method: 'POST', body: 'x' });
    expect(((await res.json()) as { headers: IncomingHttpHeaders }).headers.origin).toBeUndefined();
  });

  it('with a global origin: on requests other than GET/HEAD, by policy, and on cors hops to another origin', async () => {
    const seen: Record<string, string | undefined> = {};
    const other = await serve((req, res) => {
      seen[`other ${req.method}`] = req.headers.origin;
      res.end();
    });
    const srv = await serve((req, res) => {
      seen[`${req.url} ${req.method}`] = req.headers.origin;
      if (req.url === '/away') res.writeHead(307, { location: `${other.origin}/` }).end();
      else res.end();
    });
    const drain = async (url: string, init: FetchInit = {}): Promise<void> => void (await (await fetchWith(url, init)).arrayBuffer());
    setGlobalOrigin('https://app.example');
    try {
      await drain(`${srv.origin}/get`);
      await drain(`${srv.origin}/post`, { method: 'POST', body: 'x', referrerPolicy: 'unsafe-url' });
      // https global origin, plain http target: a downgrade under the default policy.
      await drain(`${srv.origin}/down`, { method: 'POST', body: 'x' });
      await drain(`${srv.origin}/none`, { method: 'PUT', body: 'x', referrerPolicy: 'no-referrer' });
      await drain(`${srv.origin}/mine`, { method: 'POST', body: 'x', headers: { origin: 'https://mine.example' } });
      await drain(`${srv.origin}/away`);
    } finally {
      setGlobalOrigin(undefined);
    }
    expect(seen).toEqual({
      '/get GET': undefined,
      '/post POST': 'https://app.example',
      '/down POST': 'null',
      '/none PUT': 'null',
      '/mine POST': 'https://mine.example',
      '/away GET': undefined,
      'other GET': 'https://app.example',
    });
  });
});
