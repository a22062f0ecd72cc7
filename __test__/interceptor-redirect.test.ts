// interceptors.redirect against real local servers: statuses, method and body rules, header
// stripping, limits, history, and stream bodies (spent vs factory).
import { describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, Client, errors, interceptors } from '../ts/index.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server whose `routes` answer by path; every request it saw is in `seen`. */
async function server(routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>) {
  const seen: Seen[] = [];
  const s = await httpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const route = routes[new URL(req.url!, 'http://x').pathname];
      if (route) route(req, res, body);
      else res.end(`final ${req.method} ${req.url} ${body}`);
    });
  });
  return Object.assign(track(s), { seen });
}

const to = (status: number, location: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { location });
  res.end('redirect body');
};

function agent(opts: Parameters<typeof interceptors.redirect>[0] = { maxRedirections: 5 }) {
  return track(new Agent().compose(interceptors.redirect(opts)));
}

describe('redirect: statuses and methods', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`${status} is followed for GET (relative Location)`, async () => {
      const s = await server({ '/a': to(status, '/b?x=1') });
      const res = await agent().request({ origin: s.origin, path: '/a', method: 'GET' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('final GET /b?x=1 ');
      expect(s.seen.map((r) => r.url)).toEqual(['/a', '/b?x=1']);
    });
  }

  it('follows an absolute Location', async () => {
    const s = await server({});
    const s2 = await server({ '/a': (_q, res) => (res.writeHead(302, { location: `${s.origin}/abs` }), res.end()) });
    const res = await agent().request({ origin: s2.origin, path: '/a', method: 'GET' });
    expect(await res.body.text()).toBe('final GET /abs ');
  });

  for (const status of [301, 302, 303]) {
    it(`${status} after POST becomes GET without body and without content headers`, async () => {
      const s = await server({ '/a': to(status, '/b') });
      const res = await agent().request({
        origin: s.origin,
        path: '/a',
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain', 'content-language': 'en', 'x-keep': 'yes' },
      });
      expect(await res.body.text()).toBe('final GET /b ');
      const second = s.seen[1]!;
      expect(second.method).toBe('GET');
      expect(second.headers['content-type']).toBeUndefined();
      expect(second.headers['content-language']).toBeUndefined();
      expect(second.headers['content-length']).toBeUndefined();
      expect(second.headers['x-keep']).toBe('yes');
    });
  }

  it('303 turns PUT into GET too; 301 keeps PUT and its body', async () => {
    const s = await server({ '/see': to(303, '/b'), '/moved': to(301, '/b') });
    const a = agent();
    await (await a.request({ origin: s.origin, path: '/see', method: 'PUT', body: 'x' })).body.text();
    expect(s.seen[1]!.method).toBe('GET');
    const res = await a.request({ origin: s.origin, path: '/moved', method: 'PUT', body: 'kept' });
    expect(await res.body.text()).toBe('final PUT /b kept');
  });

  for (const status of [307, 308]) {
    it(`${status} keeps method, body and content headers`, async () => {
      const s = await server({ '/a': to(status, '/b') });
      const res = await agent().request({
        origin: s.origin,
        path: '/a',
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain' },
      });
      expect(await res.body.text()).toBe('final POST /b payload');
      expect(s.seen[1]!.headers['content-type']).toBe('text/plain');
    });
  }

  it('a 3xx without Location, and a 304, are delivered as they are', async () => {
    const s = await server({
      '/none': (_q, res) => (res.writeHead(302), res.end('no location')),
      '/nm': (_q, res) => (res.writeHead(304, { location: '/b' }), res.end()),
    });
    const a = agent();
    const r1 = await a.request({ origin: s.origin, path: '/none', method: 'GET' });
    expect(r1.statusCode).toBe(302);
    expect(await r1.body.text()).toBe('no location');
    const r2 = await a.request({ origin: s.origin, path: '/nm', method: 'GET' });
    expect(r2.statusCode).toBe(304);
    await r2.body.dump();
  });

  it('HEAD stays HEAD across a 303', async () => {
    const s = await server({ '/a': to(303, '/b') });
    const res = await agent().request({ origin: s.origin, path: '/a', method: 'HEAD' });
    await res.body.dump();
    expect(s.seen.map((r) => r.method)).toEqual(['HEAD', 'HEAD']);
  });
});

describe('redirect: limits', () => {
  it('returns the last 3xx at the maximum', async () => {
    const s = await server({ '/1': to(302, '/2'), '/2': to(302, '/3'), '/3': to(302, '/4') });
    const res = await agent({ maxRedirections: 2 }).request({ origin: s.origin, path: '/1', method: 'GET' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/4');
    expect(await res.body.text()).toBe('redirect body');
    expect(s.seen.map((r) => r.url)).toEqual(['/1', '/2', '/3']);
  });

  it('a final response after exactly maxRedirections hops is delivered', async () => {
    const s = await server({ '/1': to(302, '/2'), '/2': to(302, '/3') });
    const res = await agent({ maxRedirections: 2, throwOnMaxRedirect: true }).request({ origin: s.origin, path: '/1', method: 'GET' });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it('throws MaxRedirectsError with throwOnMaxRedirect', async () => {
    const s = await server({ '/1': to(302, '/2'), '/2': to(302, '/3') });
    const err = await agent({ maxRedirections: 1, throwOnMaxRedirect: true })
      .request({ origin: s.origin, path: '/1', method: 'GET' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.MaxRedirectsError);
    expect((err as InstanceType<typeof errors.MaxRedirectsError>).code).toBe('UND_ERR_REDIRECT_MAX');
  });

  it('a loop ends at the maximum', async () => {
    const s = await server({ '/a': to(302, '/b'), '/b': to(302, '/a') });
    const res = await agent({ maxRedirections: 4 }).request({ origin: s.origin, path: '/a', method: 'GET' });
    expect(res.statusCode).toBe(302);
    await res.body.dump();
    expect(s.seen).toHaveLength(5);
  });

  it('per-request maxRedirections overrides the interceptor; 0 turns following off', async () => {
    const s = await server({ '/1': to(302, '/2'), '/2': to(302, '/3') });
    const a = agent({ maxRedirections: 1 });
    const r1 = await a.request({ origin: s.origin, path: '/1', method: 'GET', maxRedirections: 5 });
    expect(r1.statusCode).toBe(200);
    await r1.body.dump();
    const r2 = await a.request({ origin: s.origin, path: '/1', method: 'GET', maxRedirections: 0 });
    expect(r2.statusCode).toBe(302);
    await r2.body.dump();
  });

  it('an interceptor without maxRedirections follows only requests that ask', async () => {
    const s = await server({ '/1': to(302, '/2') });
    const a = agent({});
    const r1 = await a.request({ origin: s.origin, path: '/1', method: 'GET' });
    expect(r1.statusCode).toBe(302);
    await r1.body.dump();
    const r2 = await a.request({ origin: s.origin, path: '/1', method: 'GET', maxRedirections: 1 });
    expect(r2.statusCode).toBe(200);
    await r2.body.dump();
  });

  it('history lists every URL requested, in the response context', async () => {
    const s = await server({ '/1': to(302, '/2'), '/2': to(307, '/3') });
    const res = await agent().request({ origin: s.origin, path: '/1', method: 'GET' });
    await res.body.dump();
    const history = (res.context as { history: URL[] }).history;
    expect(history.map((u) => u.href)).toEqual([`${s.origin}/1`, `${s.origin}/2`, `${s.origin}/3`]);
  });
});

describe('redirect: headers', () => {
  const creds = { authorization: 'Bearer t', 'proxy-authorization': 'Basic p', cookie: 'a=1', 'x-secret': 's', 'x-other': 'o' };

  it('same origin keeps credentials; stripHeadersOnRedirect removes named headers', async () => {
    const s = await server({ '/a': to(302, '/b') });
    await (
      await agent({ maxRedirections: 2, stripHeadersOnRedirect: ['X-Other'] }).request({
        origin: s.origin,
        path: '/a',
        method: 'GET',
        headers: creds,
      })
    ).body.dump();
    const h = s.seen[1]!.headers;
    expect(h.authorization).toBe('Bearer t');
    expect(h.cookie).toBe('a=1');
    expect(h['x-other']).toBeUndefined();
    expect(h['x-secret']).toBe('s');
  });

  it('cross origin drops authorization, proxy-authorization, cookie, host and the listed headers', async () => {
    const target = await server({});
    const s = await server({ '/a': to(302, `${target.origin.replace('127.0.0.1', 'localhost')}/b`) });
    const res = await agent({ maxRedirections: 2, stripHeadersOnCrossOriginRedirect: ['x-secret'] }).request({
      origin: s.origin,
      path: '/a',
      method: 'GET',
      headers: [...Object.entries(creds).flat(), 'host', 'example.test'],
    });
    await res.body.dump();
    const h = target.seen[0]!.headers;
    expect(h.authorization).toBeUndefined();
    expect(h['proxy-authorization']).toBeUndefined();
    expect(h.cookie).toBeUndefined();
    expect(h['x-secret']).toBeUndefined();
    expect(h['x-other']).toBe('o');
    expect(h.host).toBe(new URL(target.origin.replace('127.0.0.1', 'localhost')).host);
    expect(s.seen[0]!.headers.host).toBe('example.test');
  });

  it('headers given as [name, value] pairs are stripped too', async () => {
    const target = await server({});
    const s = await server({ '/a': to(302, `${target.origin.replace('127.0.0.1', 'localhost')}/b`) });
    await (
      await agent().request({ origin: s.origin, path: '/a', method: 'GET', headers: new Map(Object.entries(creds)) })
    ).body.dump();
    expect(target.seen[0]!.headers.authorization).toBeUndefined();
    expect(target.seen[0]!.headers.cookie).toBeUndefined();
  });
});

describe('redirect: request bodies', () => {
  it('a stream body that was read is not replayed: the 307 is the response', async () => {
    const s = await server({ '/a': to(307, '/b') });
    const res = await agent().request({ origin: s.origin, path: '/a', method: 'POST', body: Readable.from(['a', 'b']) });
    expect(res.statusCode).toBe(307);
    expect(res.headers.location).toBe('/b');
    expect(await res.body.text()).toBe('redirect body');
    expect(s.seen).toHaveLength(1);
  });

  it('a stream an earlier hop took is not sent again, even if nothing was read from it yet', async () => {
    const s = track(await httpServer((_req, res) => res.writeHead(307, { location: '/b' }).end()));
    const body = new PassThrough();
    const res = await agent().request({ origin: s.origin, path: '/a', method: 'PUT', body });
    expect(res.statusCode).toBe(307);
    await res.body.dump();
  });

  it('a pipeline (its request side live) hands the 302 to its handler', async () => {
    const s = await server({ '/a': to(302, '/b') });
    const chunks: Buffer[] = [];
    const statuses: number[] = [];
    const duplex = agent().pipeline({ origin: s.origin, path: '/a', method: 'GET' }, ({ statusCode, body }) => {
      statuses.push(statusCode);
      return body;
    });
    duplex.end();
    for await (const chunk of duplex) chunks.push(chunk as Buffer);
    expect(statuses).toEqual([302]);
    expect(Buffer.concat(chunks).toString()).toBe('redirect body');
  });

  it('a body factory is called for every hop: the streamed upload survives 307 and 308', async () => {
    const s = await server({ '/a': to(307, '/b'), '/b': to(308, '/c') });
    let calls = 0;
    const res = await agent().request({
      origin: s.origin,
      path: '/a',
      method: 'PUT',
      body: () => (calls++, Readable.from(['str', 'eam'])),
    });
    expect(await res.body.text()).toBe('final PUT /c stream');
    expect(calls).toBe(3);
    expect(s.seen.map((r) => r.body)).toEqual(['stream', 'stream', 'stream']);
  });

  it('303 drops a stream body without reading it again', async () => {
    const s = await server({ '/a': to(303, '/b') });
    const res = await agent().request({ origin: s.origin, path: '/a', method: 'POST', body: Readable.from(['x']) });
    expect(await res.body.text()).toBe('final GET /b ');
  });
});

describe('redirect: options', () => {
  it('bad options throw InvalidArgumentError when the interceptor is made', () => {
    const bad: unknown[] = [
      { maxRedirections: -1 },
      { maxRedirections: 1.5 },
      { throwOnMaxRedirect: 'yes' },
      { stripHeadersOnRedirect: 'authorization' },
      { stripHeadersOnCrossOriginRedirect: [1] },
      'opts',
    ];
    for (const opts of bad) {
      expect(() => interceptors.redirect(opts as never), JSON.stringify(opts)).toThrow(errors.InvalidArgumentError);
    }
  });

  it('a bad per-request option fails that request with InvalidArgumentError', async () => {
    const s = await server({});
    const err = await agent()
      .request({ origin: s.origin, path: '/', method: 'GET', maxRedirections: -2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
  });

  it('works on a Client (same-origin hops)', async () => {
    const s: Running<unknown> & { seen: Seen[] } = await server({ '/a': to(301, '/b') });
    const client = track(new Client(s.origin).compose(interceptors.redirect({ maxRedirections: 1 })));
    const res = await client.request({ path: '/a', method: 'GET' });
    expect(await res.body.text()).toBe('final GET /b ');
  });
});

