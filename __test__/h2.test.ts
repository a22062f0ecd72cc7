// HTTP/2 from the engine, against node:http2 secure servers: negotiation, multiplexing, the
// stream limit, bodies and trailers both ways, flow control under pause, 1xx, expectContinue,
// RST_STREAM, GOAWAY, abort of one stream, and fallback to HTTP/1.1.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { constants, type ServerHttp2Stream } from 'node:http2';
import { Agent, Client, Dispatcher, buildConnector, errors, fetch } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';
import { ca, h2Server, type StreamHandler } from './fixtures/h2.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const client = (origin: string, opts: ConstructorParameters<typeof Client>[1] = {}): Client =>
  cleanup.add(new Client(origin, { connect: { ca }, ...opts }));

/** Answers every stream with `hello <path>`. */
const hello: StreamHandler = (stream, headers) => {
  stream.respond({ ':status': 200 });
  stream.end(`hello ${headers[':path']}`);
};

/** Reads a request stream's body whole. */
async function readAll(stream: ServerHttp2Stream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('HTTP/2: negotiation and multiplexing', () => {
  it('serves a request over h2 when ALPN picks it, with :authority from the origin', async () => {
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        stream.respond({ ':status': 200, 'x-scheme': String(headers[':scheme']) });
        stream.end(`${headers[':method']} ${headers[':path']} ${headers[':authority']}`);
      }),
    );
    const res = await client(srv.origin).request({ path: '/a?b=1', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-scheme']).toBe('https');
    expect(await res.body.text()).toBe(`GET /a?b=1 ${new URL(srv.origin).host}`);
  });

  it('runs concurrent requests as streams of one session', async () => {
    const held: ServerHttp2Stream[] = [];
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        held.push(stream);
        (stream as ServerHttp2Stream & { path?: string }).path = String(headers[':path']);
        // Answer only once all ten are open at the same time: proof they share the session.
        if (held.length === 10) {
          for (const s of held) {
            s.respond({ ':status': 200 });
            s.end((s as ServerHttp2Stream & { path?: string }).path);
          }
        }
      }),
    );
    const c = client(srv.origin);
    const bodies = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => (await c.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies).toEqual(Array.from({ length: 10 }, (_, i) => `/${i}`));
    expect(srv.sessions).toHaveLength(1);
    expect(srv.maxOpen).toBe(10);
  });

  it("never opens more streams than the server's SETTINGS_MAX_CONCURRENT_STREAMS", async () => {
    const srv = cleanup.add(await h2Server((s, h) => setImmediate(() => hello(s, h, srv)), { maxConcurrentStreams: 3 }));
    const c = client(srv.origin);
    const bodies = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => (await c.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies[29]).toBe('hello /29');
    expect(srv.maxOpen).toBeLessThanOrEqual(3);
    expect(srv.sessions).toHaveLength(1);
  });

  it('caps streams at the maxConcurrentStreams option', async () => {
    const srv = cleanup.add(await h2Server((s, h) => setImmediate(() => hello(s, h, srv))));
    const c = client(srv.origin, { maxConcurrentStreams: 2 });
    await Promise.all(Array.from({ length: 12 }, async () => (await c.request({ path: '/', method: 'GET' })).body.dump()));
    expect(srv.maxOpen).toBeLessThanOrEqual(2);
    expect(srv.maxOpen).toBeGreaterThan(0);
  });

  it('is served through an Agent and through fetch', async () => {
    const srv = cleanup.add(await h2Server(hello));
    const agent = cleanup.add(new Agent({ connect: { ca } }));
    const res = await agent.request({ origin: srv.origin, path: '/agent', method: 'GET' });
    expect(await res.body.text()).toBe('hello /agent');
    const f = await fetch(`${srv.origin}/fetch`, { dispatcher: agent });
    expect(f.status).toBe(200);
    expect(await f.text()).toBe('hello /fetch');
  });

  it("is served over Node's TLS through the bridged transport (custom connect, OpenSSL-only options)", async () => {
    const srv = cleanup.add(await h2Server(hello));
    const connector = buildConnector({ ca, allowH2: true });
    const custom = client(srv.origin, { connect: (opts, cb) => connector(opts, cb) });
    expect(await (await custom.request({ path: '/custom', method: 'GET' })).body.text()).toBe('hello /custom');
    const openssl = client(srv.origin, { connect: { ca, ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' } });
    const bodies = await Promise.all(
      [1, 2, 3].map(async (i) => (await openssl.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies).toEqual(['hello /1', 'hello /2', 'hello /3']);
    expect(srv.sessions).toHaveLength(2);
  });

  it('falls back to HTTP/1.1 when h2 is not offered, and uses h2 by default', async () => {
    const srv = cleanup.add(
      await h2Server(null, { allowHTTP1: true, onRequest: (req, res) => res.end(req.httpVersion) }),
    );
    const h1 = await client(srv.origin, { allowH2: false }).request({ path: '/', method: 'GET' });
    expect(await h1.body.text()).toBe('1.1');
    const h2 = await client(srv.origin).request({ path: '/', method: 'GET' });
    expect(await h2.body.text()).toBe('2.0');
  });

  it('busy / drain follow streams, not sockets, once the session is up', async () => {
    const srv = cleanup.add(await h2Server((s, h) => setImmediate(() => hello(s, h, srv))));
    const c = client(srv.origin, { maxConcurrentStreams: 4 });
    await (await c.request({ path: '/warm', method: 'GET' })).body.dump();
    const returns: boolean[] = [];
    const done: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      done.push(
        new Promise((resolve, reject) => {
          returns.push(
            c.dispatch(
              { path: `/${i}`, method: 'GET' },
              {
                onRequestStart() {},
                onResponseStart() {},
                onResponseData() {},
                onResponseEnd: () => resolve(),
                onResponseError: (_c, err) => reject(err),
              },
            ),
          );
        }),
      );
    }
    // One connection, four streams: the fourth request makes the client busy, not the first.
    expect(returns).toEqual([true, true, true, false, false]);
    const drained = once(c, 'drain');
    await Promise.all(done);
    await drained;
  });

  it('sends keep-alive PINGs at pingInterval', async () => {
    const srv = cleanup.add(await h2Server(hello));
    const c = client(srv.origin, { pingInterval: 20 });
    await (await c.request({ path: '/', method: 'GET' })).body.dump();
    const [payload] = (await once(srv.sessions[0], 'ping')) as [Buffer];
    expect(payload).toHaveLength(8);
  });

  it('rejects bad h2 options at construction', () => {
    expect(() => new Client('https://localhost:1', { maxConcurrentStreams: 0 })).toThrow(errors.InvalidArgumentError);
    expect(() => new Client('https://localhost:1', { h2Options: { connectionWindowSize: -1 } })).toThrow(
      errors.InvalidArgumentError,
    );
    expect(() => new Client('https://localhost:1', { pingInterval: 1.5 })).toThrow(errors.InvalidArgumentError);
  });
});

describe('HTTP/2: bodies, trailers, headers', () => {
  it('sends string, Buffer and streamed bodies and reads response trailers', async () => {
    const srv = cleanup.add(
      await h2Server(async (stream, headers) => {
        const body = await readAll(stream);
        stream.respond({ ':status': 200, 'x-length': String(headers['content-length'] ?? 'none') }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-bytes': String(body.length) }));
        stream.end(body);
      }),
    );
    const c = client(srv.origin);
    const s = await c.request({ path: '/', method: 'POST', body: 'hello' });
    expect(await s.body.text()).toBe('hello');
    expect(s.headers['x-length']).toBe('5');
    expect(s.trailers).toEqual({ 'x-bytes': '5' });

    const big = Buffer.alloc(1 << 20, 'z');
    const b = await c.request({ path: '/', method: 'PUT', body: big });
    expect(Buffer.from(await b.body.arrayBuffer()).equals(big)).toBe(true);

    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(16 * 1024, 97 + (i % 26)));
    const r = await c.request({ path: '/', method: 'POST', body: Readable.from(chunks) });
    const got = Buffer.from(await r.body.arrayBuffer());
    expect(got.equals(Buffer.concat(chunks))).toBe(true);
    expect(r.headers['x-length']).toBe('none'); // length unknown: no content-length, DATA frames only
    expect(r.trailers).toEqual({ 'x-bytes': String(64 * 16 * 1024) });
  });

  it('never sends connection-specific headers', async () => {
    let seen: Record<string, unknown> = {};
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        seen = { ...headers };
        hello(stream, headers, srv);
      }),
    );
    const res = await client(srv.origin).request({ path: '/', method: 'GET', headers: { connection: 'close', 'x-ok': '1' } });
    await res.body.dump();
    expect(seen['x-ok']).toBe('1');
    expect(seen.connection).toBeUndefined();
    expect(seen.host).toBeUndefined();
  });

  it('delivers 1xx informational heads to onInfo', async () => {
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.additionalHeaders({ ':status': 103, link: '</style.css>; rel=preload' });
        stream.respond({ ':status': 200 });
        stream.end('ok');
      }),
    );
    const infos: { statusCode: number; headers: Record<string, string | string[]> }[] = [];
    const res = await client(srv.origin).request({ path: '/', method: 'GET', onInfo: (i) => infos.push(i) });
    expect(await res.body.text()).toBe('ok');
    expect(infos).toEqual([{ statusCode: 103, headers: { link: '</style.css>; rel=preload' } }]);
  });

  it('expectContinue holds the body until the 100 arrives', async () => {
    let refusedBytes: Promise<number> | null = null;
    const srv = cleanup.add(
      await h2Server(async (stream, headers) => {
        if (headers[':path'] === '/refuse') {
          // A final answer without a 100: the body must never come.
          let bytes = 0;
          stream.on('data', (c: Buffer) => (bytes += c.length));
          refusedBytes = once(stream, 'close').then(() => bytes);
          stream.respond({ ':status': 417 });
          stream.end(String(headers.expect));
          return;
        }
        stream.additionalHeaders({ ':status': 100 });
        const body = await readAll(stream);
        stream.respond({ ':status': 200 });
        stream.end(`${headers.expect} ${body}`);
      }),
    );
    const c = client(srv.origin);
    const ok = await c.request({ path: '/', method: 'POST', body: 'payload', expectContinue: true });
    expect(await ok.body.text()).toBe('100-continue payload');
    const refused = await c.request({ path: '/refuse', method: 'POST', body: 'payload', expectContinue: true });
    expect(refused.statusCode).toBe(417);
    expect(await refused.body.text()).toBe('100-continue');
    expect(await refusedBytes).toBe(0);
  });
});

describe('HTTP/2: flow control', () => {
  it('a large body arrives whole under backpressure', async () => {
    const total = 8 << 20;
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.respond({ ':status': 200 });
        const chunk = Buffer.alloc(64 * 1024, 'q');
        let sent = 0;
        const pump = (): void => {
          while (sent < total) {
            sent += chunk.length;
            if (!stream.write(chunk)) return void stream.once('drain', pump);
          }
          stream.end();
        };
        pump();
      }),
    );
    const res = await client(srv.origin).request({ path: '/', method: 'GET' });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(body.length).toBe(total);
    expect(body.every((b) => b === 113)).toBe(true);
  });

  it('pause holds one stream (the server feels it) while another flows; resume gets the rest', async () => {
    const total = 4 << 20;
    let bigDone = false;
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        stream.respond({ ':status': 200 });
        if (headers[':path'] === '/small') return void stream.end('small');
        const chunk = Buffer.alloc(64 * 1024, 'b');
        let sent = 0;
        const pump = (): void => {
          while (sent < total) {
            sent += chunk.length;
            if (!stream.write(chunk)) return void stream.once('drain', pump);
          }
          stream.end(() => (bigDone = true));
        };
        pump();
      }),
    );
    const c = client(srv.origin);
    let controller: Dispatcher.DispatchController | null = null;
    let bytes = 0;
    const finished = new Promise<void>((resolve, reject) => {
      c.dispatch(
        { path: '/big', method: 'GET' },
        {
          onRequestStart() {},
          onResponseStart() {},
          onResponseData(ctl, chunk) {
            bytes += chunk.length;
            if (controller === null) {
              controller = ctl;
              ctl.pause();
            }
          },
          onResponseEnd: () => resolve(),
          onResponseError: (_c, err) => reject(err),
        },
      );
    });
    while (controller === null) await new Promise((r) => setImmediate(r));
    // The other stream on the same session is not held back.
    const small = await c.request({ path: '/small', method: 'GET' });
    expect(await small.body.text()).toBe('small');
    expect(bigDone).toBe(false);
    expect(bytes).toBeLessThan(total);
    (controller as Dispatcher.DispatchController).resume();
    await finished;
    expect(bytes).toBe(total);
    expect(srv.sessions).toHaveLength(1);
  });
});

describe('HTTP/2: errors and lifecycle', () => {
  it('RST_STREAM fails only that request, naming the h2 error code', async () => {
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        if (headers[':path'] === '/reset') return void stream.close(constants.NGHTTP2_INTERNAL_ERROR);
        hello(stream, headers, srv);
      }),
    );
    const c = client(srv.origin);
    const [a, b, d] = await Promise.allSettled([
      c.request({ path: '/a', method: 'GET' }).then((r) => r.body.text()),
      c.request({ path: '/reset', method: 'GET' }).then((r) => r.body.text()),
      c.request({ path: '/d', method: 'GET' }).then((r) => r.body.text()),
    ]);
    expect(a).toEqual({ status: 'fulfilled', value: 'hello /a' });
    expect(d).toEqual({ status: 'fulfilled', value: 'hello /d' });
    expect(b.status).toBe('rejected');
    const err = (b as PromiseRejectedResult).reason as InstanceType<typeof errors.SocketError>;
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(err.code).toBe('UND_ERR_SOCKET');
    expect(err.message).toMatch(/RST_STREAM.*code 2 \(INTERNAL_ERROR\)/);
  });

  it('RST_STREAM(NO_ERROR) ends a body of unknown length; one short of its content-length is an error', async () => {
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        const sized = headers[':path'] === '/sized';
        stream.respond({ ':status': 200, ...(sized ? { 'content-length': '100' } : null) });
        stream.write('x'.repeat(50), () => stream.close(constants.NGHTTP2_NO_ERROR));
      }),
    );
    const c = client(srv.origin);
    const open = await c.request({ path: '/open', method: 'GET' });
    expect(await open.body.text()).toBe('x'.repeat(50));
    const sized = await c.request({ path: '/sized', method: 'GET' });
    await expect(sized.body.text()).rejects.toBeInstanceOf(errors.SocketError);
  });

  it('GOAWAY emits disconnect with LIB_ERR_INFO; the next request opens a new session', async () => {
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        hello(stream, headers, srv);
        stream.session?.goaway(constants.NGHTTP2_NO_ERROR);
      }),
    );
    const c = client(srv.origin);
    const disconnected = once(c, 'disconnect');
    const first = await c.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('hello /1');
    const [origin, targets, err] = (await disconnected) as [URL, Dispatcher[], InstanceType<typeof errors.InformationalError>];
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets[0]).toBe(c);
    expect(err).toBeInstanceOf(errors.InformationalError);
    expect(err.message).toBe('HTTP/2: "GOAWAY" frame received');
    expect(err.code).toBe('LIB_ERR_INFO');
    const second = await c.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('hello /2');
    expect(srv.sessions).toHaveLength(2);
  });

  it('streams the server did not process are sent again on a new session', async () => {
    let first = true;
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        if (first) {
          first = false;
          // Process only this stream: everything above it is refused by the GOAWAY.
          stream.session?.goaway(constants.NGHTTP2_NO_ERROR, stream.id);
          setImmediate(() => hello(stream, headers, srv));
          return;
        }
        hello(stream, headers, srv);
      }),
    );
    const c = client(srv.origin);
    const bodies = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => (await c.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies).toEqual(Array.from({ length: 5 }, (_, i) => `hello /${i}`));
    expect(srv.sessions.length).toBeGreaterThanOrEqual(2);
  });

  it('abort of one stream sends RST_STREAM(CANCEL) and leaves the others alone', async () => {
    const slowClosed: Promise<number>[] = [];
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        if (headers[':path'] === '/slow') {
          stream.respond({ ':status': 200 });
          stream.write('partial');
          slowClosed.push(once(stream, 'close').then(() => stream.rstCode));
          return;
        }
        hello(stream, headers, srv);
      }),
    );
    const c = client(srv.origin);
    const ac = new AbortController();
    const slow = await c.request({ path: '/slow', method: 'GET', signal: ac.signal });
    expect(slow.statusCode).toBe(200);
    const reading = slow.body.text();
    ac.abort();
    await expect(reading).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(await slowClosed[0]).toBe(constants.NGHTTP2_CANCEL);
    const other = await c.request({ path: '/fine', method: 'GET' });
    expect(await other.body.text()).toBe('hello /fine');
    expect(srv.sessions).toHaveLength(1);
  });

  it('destroy() with streams in flight fails them and closes the session', async () => {
    const srv = cleanup.add(await h2Server((stream) => stream.respond({ ':status': 200 })));
    const c = new Client(srv.origin, { connect: { ca } });
    const res = await c.request({ path: '/', method: 'GET' });
    const reading = res.body.text();
    const closed = once(srv.sessions[0], 'close');
    const failed = expect(reading).rejects.toThrow('bye');
    await c.destroy(new Error('bye'));
    await failed;
    await closed;
  });

  it('close() waits for streams in flight', async () => {
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.respond({ ':status': 200 });
        setImmediate(() => stream.end('late'));
      }),
    );
    const c = new Client(srv.origin, { connect: { ca } });
    const pending = c.request({ path: '/', method: 'GET' }).then((r) => r.body.text());
    await new Promise((r) => setImmediate(r));
    await c.close();
    expect(await pending).toBe('late');
  });
});
