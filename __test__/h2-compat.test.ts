// HTTP/2 behaviour as undici 8.13 has it, against node:http2 servers (and a raw socket speaking h2
// frames where node:http2 cannot misbehave on purpose): idle sessions close, a Pool waits for the
// first TLS connection's ALPN before fanning out, GOAWAY / REFUSED_STREAM replay rules, a server
// lowering its stream limit, and the PING watchdog.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttps } from 'node:https';
import { constants, createServer as createH2c, type ServerHttp2Stream } from 'node:http2';
import { createServer as createNet, type AddressInfo, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Agent, Client, Pool, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';
import { ca, h2Server, type StreamHandler } from './fixtures/h2.js';
import { listen } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const hello: StreamHandler = (stream, headers) => {
  stream.respond({ ':status': 200 });
  stream.end(`hello ${headers[':path']}`);
};

/** Resolves with what `p` gives, or rejects once `ms` passed (a hang is a failure, not a timeout of the suite). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('HTTP/2: idle sessions close (issue 35 item 22)', () => {
  it('an idle session closes after keepAliveTimeout, and the next request opens a new one', async () => {
    const srv = cleanup.add(await h2Server(hello));
    const c = cleanup.add(new Client(srv.origin, { connect: { ca }, keepAliveTimeout: 100 }));
    const disconnected = once(c, 'disconnect');
    await (await c.request({ path: '/1', method: 'GET' })).body.dump();
    await within(once(srv.sessions[0], 'close'), 3000, 'the idle session closes');
    const [, , err] = (await disconnected) as [URL, unknown[], InstanceType<typeof errors.InformationalError>];
    expect(err).toBeInstanceOf(errors.InformationalError);
    expect(err.message).toBe('socket idle timeout');
    expect(await (await c.request({ path: '/2', method: 'GET' })).body.text()).toBe('hello /2');
    expect(srv.sessions).toHaveLength(2);
  });

  it("a server's close() completes once the client's idle session times out", async () => {
    const srv = await h2Server(hello);
    const c = cleanup.add(new Client(srv.origin, { connect: { ca }, keepAliveTimeout: 100 }));
    await (await c.request({ path: '/', method: 'GET' })).body.dump();
    const closed = new Promise<void>((resolve) => srv.server.close(() => resolve()));
    await within(closed, 3000, 'server.close()');
  });

  it('close() ends an idle session at once', async () => {
    const srv = cleanup.add(await h2Server(hello));
    const c = new Client(srv.origin, { connect: { ca }, keepAliveTimeout: 60e3 });
    await (await c.request({ path: '/', method: 'GET' })).body.dump();
    const sessionClosed = once(srv.sessions[0], 'close');
    await within(c.close(), 3000, 'client.close()');
    await within(sessionClosed, 3000, 'the session closes');
  });

  it('a session with a stream open is not idle', async () => {
    let release!: () => void;
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.respond({ ':status': 200 });
        stream.write('a');
        release = () => stream.end('b');
      }),
    );
    const c = cleanup.add(new Client(srv.origin, { connect: { ca }, keepAliveTimeout: 50 }));
    const res = await c.request({ path: '/', method: 'GET' });
    const text = res.body.text();
    await new Promise((r) => setTimeout(r, 300));
    release();
    expect(await text).toBe('ab');
    expect(srv.sessions).toHaveLength(1);
  });
});

describe('Pool / Agent wait for the first TLS connection to choose its protocol (issue 35 item 23)', () => {
  it('h2: 50 concurrent requests through a Pool of 10 connections share one session', async () => {
    const srv = cleanup.add(await h2Server((s, h, r) => setImmediate(() => hello(s, h, r))));
    const pool = cleanup.add(new Pool(srv.origin, { connect: { ca }, connections: 10 }));
    const bodies = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (await pool.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies[49]).toBe('hello /49');
    expect(srv.sessions).toHaveLength(1);
  });

  it('h1 only: the same burst fans out over up to 10 connections', async () => {
    const server = createHttps({ key: readFileSync(new URL('./fixtures/tls/localhost.key', import.meta.url)), cert: readFileSync(new URL('./fixtures/tls/localhost.pem', import.meta.url)) }, (req, res) => {
      setTimeout(() => res.end(req.url), 20);
    });
    let conns = 0;
    server.on('secureConnection', () => conns++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
    const pool = cleanup.add(new Pool(origin, { connect: { ca }, connections: 10 }));
    const bodies = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (await pool.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies[49]).toBe('/49');
    expect(conns).toBeGreaterThan(1);
    expect(conns).toBeLessThanOrEqual(10);
    server.closeAllConnections();
  });

  it('h2 with a server limit below the burst: more sessions open, each within the limit', async () => {
    const srv = cleanup.add(
      await h2Server((s, h, r) => setTimeout(() => !s.destroyed && hello(s, h, r), 20), { maxConcurrentStreams: 5 }),
    );
    const pool = cleanup.add(new Pool(srv.origin, { connect: { ca }, connections: 4 }));
    const bodies = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => (await pool.request({ path: `/${i}`, method: 'GET' })).body.text()),
    );
    expect(bodies[39]).toBe('hello /39');
    expect(srv.sessions.length).toBeGreaterThan(1);
    expect(srv.sessions.length).toBeLessThanOrEqual(4);
  });
});

/** A plain node:http2 server (h2c) and an Agent of one connection speaking h2c to it. */
async function h2c(onStream: (stream: ServerHttp2Stream, headers: Record<string, unknown>) => void) {
  const server = createH2c();
  let sessions = 0;
  server.on('session', () => sessions++);
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    onStream(stream, headers);
  });
  const { origin } = cleanup.add(await listen(server));
  const dispatcher = cleanup.add(new Agent({ connections: 1, useH2c: true }));
  return { dispatcher, origin, sessions: () => sessions };
}

/** Reads a request stream's body whole. */
async function readAll(stream: ServerHttp2Stream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString();
}

describe('HTTP/2: REFUSED_STREAM (undici test/http2-refused-stream.js)', () => {
  const refuse = (stream: ServerHttp2Stream, code = constants.NGHTTP2_REFUSED_STREAM) => stream.close(code);

  it('a refused stream is sent again once, on the same session, with its buffered body', async () => {
    let streams = 0;
    const received: string[] = [];
    const { dispatcher, origin, sessions } = await h2c(async (stream) => {
      if (++streams === 1) return refuse(stream);
      received.push(await readAll(stream));
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    const res = await dispatcher.request({ origin, path: '/', method: 'POST', body: Buffer.from('payload') });
    expect(await res.body.text()).toBe('ok');
    expect(received).toEqual(['payload']);
    expect(streams).toBe(2);
    expect(sessions()).toBe(1);
  });

  it('not more than once: the second refusal fails the request; the session still serves the next', async () => {
    let streams = 0;
    const { dispatcher, origin } = await h2c((stream) => {
      if (++streams <= 2) return refuse(stream);
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    const err = await dispatcher.request({ origin, path: '/', method: 'GET' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect((err as Error).message).toMatch(/RST_STREAM.*code 7 \(REFUSED_STREAM\)/);
    expect(streams).toBe(2);
    expect(await (await dispatcher.request({ origin, path: '/', method: 'GET' })).body.text()).toBe('ok');
    expect(streams).toBe(3);
  });

  it('a streamed body is not sent again; other stream errors are not retried', async () => {
    let streams = 0;
    const { dispatcher, origin } = await h2c((stream, headers) => {
      streams++;
      refuse(stream, headers[':path'] === '/protocol' ? constants.NGHTTP2_PROTOCOL_ERROR : constants.NGHTTP2_REFUSED_STREAM);
    });
    const streamed = await dispatcher
      .request({ origin, path: '/', method: 'POST', body: Readable.from(['payload']) })
      .catch((e: Error) => e);
    expect((streamed as Error).message).toMatch(/REFUSED_STREAM/);
    expect(streams).toBe(1);
    const protocol = await dispatcher.request({ origin, path: '/protocol', method: 'GET' }).catch((e: Error) => e);
    expect((protocol as Error).message).toMatch(/PROTOCOL_ERROR/);
    expect(streams).toBe(2);
  });
});

describe('HTTP/2: GOAWAY with a last stream id (undici test/http2-goaway*.js)', () => {
  it('streams above it: replayable requests go to a new session once, a streamed body fails with the GOAWAY', async () => {
    const held: ServerHttp2Stream[] = [];
    const paths: string[] = [];
    let goneAway = false;
    const { dispatcher, origin, sessions } = await h2c((stream, headers) => {
      paths.push(String(headers[':path']));
      if (goneAway) {
        void readAll(stream).then((body) => {
          stream.respond({ ':status': 200 });
          stream.end(`${headers[':path']} ${body}`);
        });
        return;
      }
      held.push(stream);
      if (held.length < 3) return;
      // All three are open: only the first is processed, the others are refused by the GOAWAY.
      goneAway = true;
      const [first] = held;
      first.session!.goaway(constants.NGHTTP2_NO_ERROR, first.id);
      first.respond({ ':status': 200 });
      first.end('first');
    });
    const first = dispatcher.request({ origin, path: '/first', method: 'GET' }).then((r) => r.body.text());
    const buffered = dispatcher
      .request({ origin, path: '/buffered', method: 'POST', body: Buffer.from('again') })
      .then((r) => r.body.text());
    const streamed = dispatcher
      .request({ origin, path: '/streamed', method: 'POST', body: Readable.from(['once']) })
      .then((r) => r.body.text());
    const [a, b, c] = await Promise.allSettled([first, buffered, streamed]);
    expect(a).toEqual({ status: 'fulfilled', value: 'first' });
    expect(b).toEqual({ status: 'fulfilled', value: '/buffered again' });
    expect(c.status).toBe('rejected');
    const err = (c as PromiseRejectedResult).reason as Error & { code: string };
    expect(err).toBeInstanceOf(errors.InformationalError);
    expect(err.message).toBe('HTTP/2: "GOAWAY" frame received with code 0');
    expect(paths.filter((p) => p === '/streamed')).toHaveLength(1);
    expect(sessions()).toBe(2);
  });

  it('a server that refuses every session (GOAWAY, last stream id 0): sent again once, then it fails', async () => {
    // node:http2 clamps lastStreamId to the last stream it received: a raw peer says 0.
    const srv = await rawH2((socket) => {
      const goaway = Buffer.from([0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
      socket.write(goaway);
    });
    const c = cleanup.add(new Client(srv.origin, { useH2c: true }));
    const err = await within(c.request({ path: '/', method: 'GET' }).catch((e: Error) => e), 5000, 'the request settles');
    expect(err).toBeInstanceOf(errors.InformationalError);
    expect((err as Error).message).toBe('HTTP/2: "GOAWAY" frame received with code 0');
    expect(srv.headers).toBe(2);
    expect(srv.connections).toBe(2);
  });
});

describe('HTTP/2: the server sets the stream limit (issue 35 item 27)', () => {
  it('SETTINGS lowering maxConcurrentStreams mid-session is obeyed; one raising it never exceeds the option', async () => {
    const srv = cleanup.add(await h2Server((s, h, r) => setTimeout(() => !s.destroyed && hello(s, h, r), 10)));
    const c = cleanup.add(new Client(srv.origin, { connect: { ca }, maxConcurrentStreams: 4 }));
    await (await c.request({ path: '/warm', method: 'GET' })).body.dump();
    const session = srv.sessions[0];
    session.settings({ maxConcurrentStreams: 2 });
    await once(session, 'localSettings');
    srv.maxOpen = 0;
    const burst = () =>
      Promise.all(Array.from({ length: 12 }, async (_, i) => (await c.request({ path: `/${i}`, method: 'GET' })).body.text()));
    expect((await burst())[11]).toBe('hello /11');
    expect(srv.maxOpen).toBe(2);
    session.settings({ maxConcurrentStreams: 1000 });
    await once(session, 'localSettings');
    srv.maxOpen = 0;
    expect((await burst())[11]).toBe('hello /11');
    expect(srv.maxOpen).toBe(4);
    expect(srv.sessions).toHaveLength(1);
  });
});

/**
 * A raw h2c server that completes the handshake (its SETTINGS and an ACK of the client's) and
 * then reads frames without answering one: PINGs go unacknowledged; a request gets `onHeaders`.
 */
async function rawH2(onHeaders: (socket: Socket) => void = () => {}) {
  const pings: number[] = [];
  const counts = { headers: 0, connections: 0 };
  const server = createNet((socket) => {
    counts.connections++;
    socket.on('error', () => {});
    // SETTINGS (empty), then SETTINGS with ACK.
    socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0]));
    let buf = Buffer.alloc(0);
    let preface = false;
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!preface) {
        if (buf.length < 24) return;
        buf = buf.subarray(24);
        preface = true;
      }
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) return;
        if (buf[3] === 6 && (buf[4] & 1) === 0) pings.push(Date.now());
        if (buf[3] === 1) {
          counts.headers++;
          onHeaders(socket);
        }
        buf = buf.subarray(9 + len);
      }
    });
  });
  const { origin } = cleanup.add(await listen(server));
  return {
    origin,
    pings,
    get headers() {
      return counts.headers;
    },
    get connections() {
      return counts.connections;
    },
  };
}

describe('HTTP/2: the PING watchdog (issue 35 item 27)', () => {
  it('a PING still unanswered when the next is due ends the session; its requests fail', async () => {
    const srv = await rawH2();
    const c = cleanup.add(new Client(srv.origin, { useH2c: true, pingInterval: 100 }));
    const disconnected = once(c, 'disconnect');
    const err = await within(
      c.request({ path: '/', method: 'GET' }).catch((e: Error) => e),
      3000,
      'the request fails',
    );
    expect(err).toBeInstanceOf(errors.SocketError);
    expect((err as Error).message).toBe('HTTP/2: connection unresponsive');
    const [, , dErr] = (await disconnected) as [URL, unknown[], Error];
    expect(dErr.message).toBe('HTTP/2: connection unresponsive');
    expect(srv.pings).toHaveLength(1);
  });
});
