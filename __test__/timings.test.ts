// Request timings (a ferro extension, issue 34 item 3): each phase's end on performance.now()'s
// clock, measured in the engine, on request / dispatch / stream / pipeline / fetch, HTTP/1.1 (http
// and https) and HTTP/2. A fresh connection reports its DNS / connect / TLS stamps on its first
// request, a reused one zeros; the stamps fall between performance.now() reads taken before the
// call and after the body ended (the engine's clock offset is right); a server that holds its head
// back shows up between requestSent and firstByte.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createHttpsServer } from 'node:https';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Client, ProxyAgent, fetch, interceptors, request, type DispatchController, type RequestTimings } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { httpServer, listen } from './fixtures/servers.js';
import { h2Server, ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';
import { fixtureCa, localhostPair, startProxy } from './fixtures/proxy.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const hello: Handler = (_req, res) => res.end('hello');

/** An http origin named 'localhost' (so the engine resolves a name). */
async function httpOrigin(handler: Handler = hello): Promise<string> {
  const s = cleanup.add(await httpServer(handler));
  return `http://localhost:${s.port}`;
}

async function httpsOrigin(handler: Handler = hello): Promise<string> {
  const s = cleanup.add(await listen(createHttpsServer({ ...localhostPair, keepAliveTimeout: 60_000 }, handler)));
  return `https://localhost:${s.port}`;
}

const PHASES = ['queued', 'dns', 'connect', 'tls', 'requestSent', 'firstByte', 'end'] as const;

/** The stamps that happened, in phase order, never decrease, and lie within [before, after]. */
function expectOrdered(t: RequestTimings, before: number, after: number): void {
  const happened = PHASES.map((p) => t[p]).filter((v) => v !== 0);
  expect(happened).toEqual([...happened].sort((a, b) => a - b));
  expect(happened[0]).toBeGreaterThanOrEqual(before);
  expect(happened.at(-1)).toBeLessThanOrEqual(after);
}

/** request() and its body read whole; the timings with the performance.now() reads around it. */
async function timedRequest(client: Client, path = '/'): Promise<{ t: RequestTimings; before: number; after: number }> {
  const before = performance.now();
  const res = await client.request({ path, method: 'GET' });
  await res.body.text();
  const after = performance.now();
  expect(res.timings).toBeDefined();
  return { t: res.timings!, before, after };
}

describe('timings on request()', () => {
  it('HTTP/1.1: a fresh connection reports dns and connect, no tls; a reused one none of them', async () => {
    const client = cleanup.add(new Client(await httpOrigin()));
    const first = await timedRequest(client);
    expect(first.t.dns).toBeGreaterThan(0);
    expect(first.t.connect).toBeGreaterThan(0);
    expect(first.t.tls).toBe(0);
    expect(first.t.requestSent).toBeGreaterThan(0);
    expect(first.t.firstByte).toBeGreaterThan(0);
    expect(first.t.end).toBeGreaterThan(0);
    expectOrdered(first.t, first.before, first.after);

    const second = await timedRequest(client);
    expect([second.t.dns, second.t.connect, second.t.tls]).toEqual([0, 0, 0]);
    expect(second.t.queued).toBeGreaterThanOrEqual(first.t.end);
    expectOrdered(second.t, second.before, second.after);
  });

  it('an IP address is not resolved: dns is 0, connect is not', async () => {
    const s = cleanup.add(await httpServer(hello));
    const client = cleanup.add(new Client(s.origin));
    const { t, before, after } = await timedRequest(client);
    expect(t.dns).toBe(0);
    expect(t.connect).toBeGreaterThan(0);
    expectOrdered(t, before, after);
  });

  it('HTTPS: a fresh connection reports tls after connect', async () => {
    const client = cleanup.add(new Client(await httpsOrigin(), { connect: { ca } }));
    const { t, before, after } = await timedRequest(client);
    expect(t.dns).toBeGreaterThan(0);
    expect(t.tls).toBeGreaterThan(t.connect);
    expectOrdered(t, before, after);
    const again = await timedRequest(client);
    expect([again.t.dns, again.t.connect, again.t.tls]).toEqual([0, 0, 0]);
  });

  it('a head held back by the server lies between requestSent and firstByte', async () => {
    let received = 0;
    let written = 0;
    const client = cleanup.add(
      new Client(
        await httpOrigin((_req, res) => {
          received = performance.now();
          setTimeout(() => {
            written = performance.now();
            res.end('late');
          }, 50);
        }),
      ),
    );
    const { t } = await timedRequest(client);
    expect(written - received).toBeGreaterThan(40);
    expect(t.requestSent).toBeLessThanOrEqual(received);
    expect(t.firstByte).toBeGreaterThanOrEqual(written);
    expect(t.firstByte - t.requestSent).toBeGreaterThanOrEqual(written - received);
  });

  it('end is filled in when the body has ended, on the same object', async () => {
    let release!: () => void;
    const client = cleanup.add(
      new Client(
        await httpOrigin((_req, res) => {
          res.write('first');
          release = () => res.end('last');
        }),
      ),
    );
    const res = await client.request({ path: '/', method: 'GET' });
    const t = res.timings!;
    expect(t.firstByte).toBeGreaterThan(0);
    expect(t.end).toBe(0);
    release();
    await res.body.text();
    expect(res.timings).toBe(t);
    expect(t.end).toBeGreaterThanOrEqual(t.firstByte);
  });

  it('a request body is sent before requestSent', async () => {
    let got = '';
    const client = cleanup.add(
      new Client(
        await httpOrigin((req, res) => {
          req.setEncoding('latin1');
          req.on('data', (c: string) => (got += c));
          req.on('end', () => res.end('ok'));
        }),
      ),
    );
    const before = performance.now();
    const res = await client.request({ path: '/', method: 'POST', body: 'x'.repeat(100_000) });
    await res.body.text();
    expect(got.length).toBe(100_000);
    expectOrdered(res.timings!, before, performance.now());
  });
});

describe('timings on HTTP/2', () => {
  it('a fresh session reports dns, connect and tls; a second stream on it none', async () => {
    const srv = await h2Server((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('h2');
    });
    cleanup.add(srv);
    const client = cleanup.add(new Client(srv.origin, { connect: { ca }, allowH2: true }));
    const first = await timedRequest(client);
    expect(first.t.dns).toBeGreaterThan(0);
    expect(first.t.tls).toBeGreaterThan(first.t.connect);
    expectOrdered(first.t, first.before, first.after);
    const second = await timedRequest(client);
    expect([second.t.dns, second.t.connect, second.t.tls]).toEqual([0, 0, 0]);
    expectOrdered(second.t, second.before, second.after);
    expect(srv.sessions.length).toBe(1);
  });
});

describe('timings on HTTP/3', () => {
  it('a fresh QUIC connection reports dns, then connect and tls together; a second stream none', async () => {
    const server = cleanup.add(await h3Server());
    const client = cleanup.add(new Client(server.origin, { connect: { ca }, allowH3: true, h3Options: { priorKnowledge: true } }));
    const first = await timedRequest(client);
    expect(first.t.dns).toBeGreaterThan(0);
    expect(first.t.connect).toBeGreaterThan(first.t.dns);
    expect(first.t.tls).toBe(first.t.connect);
    expect(first.t.requestSent).toBeGreaterThan(0);
    expectOrdered(first.t, first.before, first.after);
    const second = await timedRequest(client);
    expect([second.t.dns, second.t.connect, second.t.tls]).toEqual([0, 0, 0]);
    expectOrdered(second.t, second.before, second.after);
  });
});

describe('timings through interceptors', () => {
  it('controllers that wrap the engine request pass its timings on', async () => {
    const origin = await httpOrigin();
    const client = cleanup.add(new Client(origin));
    const composed = client.compose(
      interceptors.retry(),
      interceptors.redirect({ maxRedirections: 2 }),
      interceptors.decompress(),
      interceptors.deduplicate(),
      interceptors.cache(),
      interceptors.dump({ maxSize: 1024 }),
    );
    const before = performance.now();
    const t = await new Promise<RequestTimings | undefined>((resolve, reject) => {
      composed.dispatch(
        { origin, path: '/', method: 'GET' },
        {
          onRequestStart: () => {},
          onResponseStart: () => {},
          onResponseData: () => {},
          onResponseEnd: (controller: DispatchController) => resolve(controller.timings),
          onResponseError: (_c: DispatchController, err: Error) => reject(err),
        },
      );
    });
    expect(t?.connect).toBeGreaterThan(0);
    expect(t!.end).toBeGreaterThan(0);
    expectOrdered(t!, before, performance.now());
  });
});

describe('timings through a proxy', () => {
  it('an https origin through CONNECT: connect is when the tunnel was handed over, then the TLS to the origin', async () => {
    const origin = await httpsOrigin();
    const proxy = cleanup.add(await startProxy());
    const agent = cleanup.add(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const before = performance.now();
    const res = await request(`${origin}/through`, { dispatcher: agent });
    await res.body.text();
    const t = res.timings!;
    // The tunnel's name was resolved by the proxy, not by this connection.
    expect(t.dns).toBe(0);
    expect(t.connect).toBeGreaterThan(0);
    expect(t.tls).toBeGreaterThan(t.connect);
    expectOrdered(t, before, performance.now());
    const again = await request(`${origin}/again`, { dispatcher: agent });
    await again.body.text();
    expect([again.timings!.dns, again.timings!.connect, again.timings!.tls]).toEqual([0, 0, 0]);
    expect(proxy.tunnels).toBe(1);
  });
});

describe('timings on the other APIs', () => {
  it('dispatch: controller.timings in onResponseEnd', async () => {
    const client = cleanup.add(new Client(await httpOrigin()));
    const before = performance.now();
    const t = await new Promise<RequestTimings | undefined>((resolve, reject) => {
      client.dispatch(
        { path: '/', method: 'GET' },
        {
          onRequestStart: () => {},
          onResponseStart: () => {},
          onResponseData: () => {},
          onResponseEnd: (controller: DispatchController) => resolve(controller.timings),
          onResponseError: (_c: DispatchController, err: Error) => reject(err),
        },
      );
    });
    expect(t).toBeDefined();
    expect(t!.end).toBeGreaterThan(0);
    expect(t!.connect).toBeGreaterThan(0);
    expectOrdered(t!, before, performance.now());
  });

  it('stream: the factory gets the timings up to the head (end 0 there), filled in at the end', async () => {
    const client = cleanup.add(new Client(await httpOrigin()));
    const before = performance.now();
    let atFactory: { firstByte: number; end: number } | null = null;
    let timings: RequestTimings | undefined;
    await client.stream({ path: '/', method: 'GET' }, ({ timings: t }) => {
      timings = t;
      atFactory = { firstByte: t!.firstByte, end: t!.end };
      return new Writable({ write: (_c, _e, cb) => cb() });
    });
    expect(atFactory!.firstByte).toBeGreaterThan(0);
    expect(atFactory!.end).toBe(0);
    expect(timings!.end).toBeGreaterThan(0);
    expectOrdered(timings!, before, performance.now());
  });

  it('pipeline: the handler gets them too', async () => {
    const client = cleanup.add(new Client(await httpOrigin()));
    const before = performance.now();
    let timings: RequestTimings | undefined;
    const duplex = client.pipeline({ path: '/', method: 'GET' }, ({ body, timings: t }) => {
      timings = t;
      return body;
    });
    duplex.end();
    duplex.resume();
    await once(duplex, 'end');
    expect(timings!.firstByte).toBeGreaterThan(0);
    expect(timings!.end).toBeGreaterThan(0);
    expectOrdered(timings!, before, performance.now());
  });

  it("fetch: the resource timing entry is filled from the engine's numbers", async () => {
    const origin = await httpOrigin();
    const seen: RequestTimings[] = [];
    // Watches the same request's controller, to compare the entry with the timings.
    const client = cleanup.add(new Client(origin));
    const dispatcher = client.compose((dispatch) => (opts, handler) =>
      dispatch(opts, {
        ...handler,
        onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
        onResponseStart: (c, s, h, m) => handler.onResponseStart?.(c, s, h, m),
        onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
        onResponseError: (c, e) => handler.onResponseError?.(c, e),
        onResponseEnd: (c, trailers) => {
          if (c.timings) seen.push(c.timings);
          handler.onResponseEnd?.(c, trailers);
        },
      }),
    );
    const url = `${origin}/fetched-${Math.random()}`;
    const before = performance.now();
    const res = await fetch(url, { dispatcher });
    expect(await res.text()).toBe('hello');
    const after = performance.now();
    const entry = performance.getEntriesByType('resource').find((e) => e.name === url) as PerformanceResourceTiming | undefined;
    expect(entry).toBeDefined();
    const t = seen[0]!;
    expect(entry!.startTime).toBeGreaterThanOrEqual(before);
    expect(entry!.domainLookupEnd).toBe(t.dns);
    expect(entry!.connectEnd).toBe(t.connect);
    expect(entry!.secureConnectionStart).toBe(0);
    expect(entry!.responseStart).toBe(t.firstByte);
    expect(entry!.responseEnd).toBe(t.end);
    expect(entry!.responseEnd).toBeLessThanOrEqual(after);
    expect(entry!.encodedBodySize).toBe(5);
    performance.clearResourceTimings();
  });
});
