// The foundation's HTTP/1.1 path on the engine: keep-alive, pipelining, framing, backpressure,
// abort, close and destroy — each against a real local server.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pool, errors } from '../ts/index.js';
import {
  BodyProgress,
  backpressuredBody,
  countRequests,
  httpServer,
  rawServer,
  readUntil,
  serverStaysBlocked,
  type Running,
} from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { recorder } from './fixtures/recorder.js';

const cleanup = useCleanup();
const track = cleanup.track;
async function serve(...args: Parameters<typeof httpServer>): Promise<Running<import('node:http').Server>> {
  return track(await httpServer(...args));
}

describe('request and keep-alive', () => {
  it('returns status, headers and body, and reuses one socket', async () => {
    let sockets = 0;
    const srv = await serve((req, res) => {
      res.setHeader('x-path', req.url!);
      res.end(`hello ${req.url}`);
    });
    srv.server.on('connection', () => sockets++);
    const client = track(new Client(srv.origin));
    for (let i = 0; i < 5; i++) {
      const { statusCode, statusText, headers, body } = await client.request({ path: `/r${i}`, method: 'GET' });
      expect(statusCode).toBe(200);
      expect(statusText).toBe('OK');
      expect(headers['x-path']).toBe(`/r${i}`);
      expect(await body.text()).toBe(`hello /r${i}`);
    }
    expect(sockets).toBe(1);
  });

  it('sends string, Buffer and Uint8Array bodies with content-length', async () => {
    const seen: string[] = [];
    const srv = await serve((req, res) => {
      let data = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (data += c));
      req.on('end', () => {
        seen.push(`${req.headers['content-length']}:${data}`);
        res.end('ok');
      });
    });
    const client = track(new Client(srv.origin));
    for (const body of ['a string', Buffer.from('a buffer'), new TextEncoder().encode('uint8 array')]) {
      const res = await client.request({ path: '/', method: 'POST', body });
      await res.body.dump();
    }
    const empty = await client.request({ path: '/', method: 'POST' });
    await empty.body.dump();
    expect(seen).toEqual(['8:a string', '8:a buffer', '11:uint8 array', '0:']);
  });

  it('serves a pool from several connections, never more than `connections`', async () => {
    const sockets = new Set<unknown>();
    const srv = await serve((req, res) => {
      sockets.add(req.socket);
      setImmediate(() => res.end('x'));
    });
    const pool = track(new Pool(srv.origin, { connections: 3 }));
    const all = await Promise.all(
      Array.from({ length: 12 }, async () => (await pool.request({ path: '/', method: 'GET' })).body.text()),
    );
    expect(all).toEqual(Array(12).fill('x'));
    expect(sockets.size).toBeGreaterThan(1);
    expect(sockets.size).toBeLessThanOrEqual(3);
  });

  it('talks to a unix socket with socketPath', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ferro-')), 'sock');
    const server = createServer((req, res) => res.end(`unix ${req.url}`));
    server.listen(path);
    await once(server, 'listening');
    cleanup.push(() => new Promise((r) => server.close(r)));
    const client = track(new Client('http://localhost', { socketPath: path }));
    const { body } = await client.request({ path: '/there', method: 'GET' });
    expect(await body.text()).toBe('unix /there');
  });
});

describe('pipelining and framing (exact bytes)', () => {
  const three =
    'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none' +
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n' +
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nthree';

  async function pipelined(write: (socket: import('node:net').Socket, bytes: Buffer) => Promise<void>): Promise<void> {
    const srv = track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 3);
        await write(socket, Buffer.from(three, 'latin1'));
      }),
    );
    const client = track(new Client(srv.origin, { pipelining: 3 }));
    // blocking: false lets the GETs share the pipeline before the first headers arrive.
    const bodies = await Promise.all(
      ['/1', '/2', '/3'].map(async (path) => (await client.request({ path, method: 'GET', blocking: false })).body.text()),
    );
    expect(bodies).toEqual(['one', 'two', 'three']);
  }

  it('decodes three pipelined responses arriving in one packet', async () => {
    await pipelined(async (socket, bytes) => {
      socket.write(bytes);
    });
  });

  it('decodes three pipelined responses arriving byte by byte', async () => {
    await pipelined(async (socket, bytes) => {
      socket.setNoDelay(true);
      for (const b of bytes) {
        socket.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
    });
  });

  it('delivers chunked bodies with trailers to dispatch and request', async () => {
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'X-Checksum' });
      res.write('chunk one, ');
      res.write('chunk two');
      res.addTrailers({ 'X-Checksum': 'abc123' });
      res.end();
    });
    const client = track(new Client(srv.origin));
    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200', 'end']);
    expect(Buffer.concat(rec.body).toString()).toBe('chunk one, chunk two');
    expect(rec.trailers).toEqual({ 'x-checksum': 'abc123' });
    expect(rec.controller!.rawTrailers!.map(String)).toEqual(['X-Checksum', 'abc123']);
    expect(rec.controller!.rawHeaders!.map(String)).toContain('Content-Type');

    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('chunk one, chunk two');
    expect(res.trailers).toEqual({ 'x-checksum': 'abc123' });
  });

  it('reads a close-delimited body to the end of the connection', async () => {
    const srv = track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 1);
        socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end');
      }),
    );
    const client = track(new Client(srv.origin));
    const { body } = await client.request({ path: '/', method: 'GET' });
    expect(await body.text()).toBe('until the end');
  });

  it('fails a malformed response with HTTPParserError', async () => {
    const srv = track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 1);
        socket.end('HTTP/1.1 abc nonsense\r\n\r\n');
      }),
    );
    const client = track(new Client(srv.origin));
    await expect(client.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.HTTPParserError);
  });

  it('fails a Content-Length body cut short after `connection: close` with ResponseContentLengthMismatchError', async () => {
    const srv = track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 1);
        socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nabc');
      }),
    );
    const client = track(new Client(srv.origin));
    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.error).toBeInstanceOf(errors.ResponseContentLengthMismatchError);
  });
});

describe('backpressure and abort', () => {
  it('pause stops reading the socket until resume; the server sees its writes block', async () => {
    const total = 64 * 1024 * 1024; // far beyond socket buffers and the engine's queue bound
    const progress = new BodyProgress();
    const srv = await serve(backpressuredBody(total, 'x', progress));
    const client = track(new Client(srv.origin));
    let received = 0;
    let pausedOnce = false;
    let pausedNow!: () => void;
    const paused = new Promise<void>((r) => (pausedNow = r));
    const [handler, rec] = recorder({
      onResponseData(controller, c) {
        received += c.length;
        if (!pausedOnce && received > 1024 * 1024) {
          pausedOnce = true;
          rec.events.push('paused');
          controller.pause();
          pausedNow();
        }
      },
    });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await paused;
    await serverStaysBlocked(progress);
    const writtenSettled = progress.written;
    const receivedSettled = received;
    await serverStaysBlocked(progress);
    expect(progress.written).toBe(writtenSettled);
    expect(received).toBe(receivedSettled);
    expect(progress.written).toBeLessThan(total);
    // Past the pause, JS gets at most the batch it was reading plus one queue's worth (each is
    // bounded by the engine's 4 MiB high-water mark plus one 64 KiB read).
    expect(received).toBeLessThan(1024 * 1024 + 2 * (4 + 1) * 1024 * 1024);
    rec.controller!.resume();
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200', 'paused', 'end']);
    expect(received).toBe(total);
  });

  it('resume delivers bytes already buffered when the server has nothing more to send', async () => {
    // Both responses arrive in one write. The second request was paused from the start, so the
    // engine stops decoding at its response and keeps the bytes; resume must decode them without
    // waiting for socket data that will never come.
    const srv = track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 2);
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirstHTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecond');
      }),
    );
    const client = track(new Client(srv.origin, { pipelining: 2 }));
    const [first, a] = recorder();
    const [second, b] = recorder({
      onRequestStart(controller) {
        controller.pause();
      },
    });
    client.dispatch({ path: '/a', method: 'GET', blocking: false }, first);
    client.dispatch({ path: '/b', method: 'GET', blocking: false }, second);
    await a.done;
    expect(Buffer.concat(a.body).toString()).toBe('first');
    expect(b.events).toEqual(['start']);
    b.controller!.resume();
    await b.done;
    expect(b.events).toEqual(['start', 'head 200', 'end']);
    expect(Buffer.concat(b.body).toString()).toBe('second');
  });

  it('abort mid-body reports the reason and closes the connection', async () => {
    let serverSocketClosed!: () => void;
    const closed = new Promise<void>((r) => (serverSocketClosed = r));
    const srv = await serve((req, res) => {
      req.socket.on('close', () => serverSocketClosed());
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
    });
    const client = track(new Client(srv.origin));
    const reason = new Error('stop it');
    const [handler, rec] = recorder({
      onResponseData(controller) {
        controller.abort(reason);
      },
    });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.error).toBe(reason);
    expect(rec.controller!.aborted).toBe(true);
    await closed;
  });

  it('a request aborted by its signal fails with RequestAbortedError', async () => {
    const srv = await serve((req, res) => {
      res.writeHead(200);
      res.write('some');
    });
    const client = track(new Client(srv.origin));
    const ac = new AbortController();
    const { body } = await client.request({ path: '/', method: 'GET', signal: ac.signal });
    ac.abort();
    await expect(body.text()).rejects.toBeInstanceOf(errors.RequestAbortedError);
  });
});

describe('close and destroy', () => {
  it('close waits for in-flight requests, then refuses new ones', async () => {
    let respond!: () => void;
    const srv = await serve((req, res) => {
      respond = () => res.end('late');
    });
    const client = new Client(srv.origin);
    const pending = client.request({ path: '/', method: 'GET' });
    await new Promise<void>((r) => srv.server.once('request', () => r()));
    let closed = false;
    const closing = client.close().then(() => (closed = true));
    respond();
    const { body } = await pending;
    expect(await body.text()).toBe('late');
    await closing;
    expect(closed).toBe(true);
    // Closed, then (as in undici) destroyed once the close finished.
    await expect(client.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('close and destroy take callbacks too', async () => {
    const srv = await serve((req, res) => res.end());
    const a = new Client(srv.origin);
    await new Promise<void>((resolve, reject) => a.close((err) => (err ? reject(err) : resolve())));
    const b = new Client(srv.origin);
    await new Promise<void>((resolve, reject) => b.destroy((err) => (err ? reject(err) : resolve())));
    const c = new Client(srv.origin);
    await new Promise<void>((resolve, reject) => c.destroy(null, (err) => (err ? reject(err) : resolve())));
  });

  it('destroy fails running requests with the given error', async () => {
    const srv = await serve(() => {
      /* never answers */
    });
    const client = new Client(srv.origin);
    const pending = client.request({ path: '/', method: 'GET' });
    await new Promise<void>((r) => srv.server.once('request', () => r()));
    const boom = new Error('boom');
    const failed = expect(pending).rejects.toBe(boom);
    await client.destroy(boom);
    await failed;
    await expect(client.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('destroy without an error fails requests with ClientDestroyedError', async () => {
    const srv = await serve(() => {});
    const client = new Client(srv.origin);
    const pending = client.request({ path: '/', method: 'GET' });
    await new Promise<void>((r) => srv.server.once('request', () => r()));
    const failed = expect(pending).rejects.toBeInstanceOf(errors.ClientDestroyedError);
    await client.destroy();
    await failed;
  });

  it("destroy fails its own running and queued requests, and no other dispatcher's", async () => {
    const answers: (() => void)[] = [];
    const srv = await serve((_req, res) => answers.push(() => res.end('b')));
    const a = new Pool(srv.origin, { connections: 1 });
    const b = track(new Pool(srv.origin, { connections: 1 }));
    const ofA = [0, 1, 2].map(() => a.request({ path: '/a', method: 'GET' }));
    const ofB = b.request({ path: '/b', method: 'GET' });
    // One of A's is on the wire, two wait in its queue; B's is on the wire too.
    while (answers.length < 2) await once(srv.server, 'request');
    expect(a.stats).toMatchObject({ size: 3 });
    // Handlers first: the requests fail before destroy() settles (after the connection ended).
    const failed = ofA.map((p) => expect(p).rejects.toBeInstanceOf(errors.ClientDestroyedError));
    await a.destroy();
    await Promise.all(failed);
    for (const answer of answers) answer();
    const { body } = await ofB;
    expect(await body.text()).toBe('b');
  });
});

describe('connection errors, events and busy', () => {
  it('a refused connection fails the request with ECONNREFUSED and emits connectionError', async () => {
    const srv = await httpServer(() => {});
    const origin = srv.origin;
    await srv.close();
    const client = track(new Client(origin));
    const events: unknown[][] = [];
    client.on('connectionError', (...args) => events.push(args));
    const err = await client.request({ path: '/', method: 'GET' }).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(events).toHaveLength(1);
    expect(String(events[0]![0])).toBe(`${origin}/`);
    expect(events[0]![1]).toEqual([client]);
  });

  it('emits connect and disconnect', async () => {
    const srv = await serve((req, res) => res.end('bye'));
    // node:http announces `Keep-Alive: timeout=60`; the hint wins over keepAliveTimeout, capped by keepAliveMaxTimeout.
    const client = track(new Client(srv.origin, { keepAliveTimeout: 50, keepAliveMaxTimeout: 50 }));
    const connected = once(client, 'connect');
    const disconnected = once(client, 'disconnect');
    const { body } = await client.request({ path: '/', method: 'GET' });
    await body.text();
    const [origin, targets] = await connected;
    expect(origin).toBeInstanceOf(URL);
    expect(targets).toEqual([client]);
    const [, , err] = await disconnected;
    expect(err).toMatchObject({ constructor: errors.InformationalError, code: 'LIB_ERR_INFO', message: 'socket idle timeout' });
  });

  it('dispatch returns false when busy, then emits drain', async () => {
    const srv = await serve((req, res) => res.end('x'));
    const client = track(new Client(srv.origin));
    const [handler, rec] = recorder();
    const accepted = client.dispatch({ path: '/', method: 'GET' }, handler);
    expect(accepted).toBe(false);
    const [origin, targets] = await once(client, 'drain');
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets).toEqual([client]);
    await rec.done;
  });

  it('rejects bad origins and bad headers with InvalidArgumentError', async () => {
    expect(() => new Client('ftp://example.com')).toThrow(errors.InvalidArgumentError);
    expect(() => new Client('http://localhost/path')).toThrow(errors.InvalidArgumentError);
    const srv = await serve((req, res) => res.end());
    const client = track(new Client(srv.origin));
    await expect(client.request({ path: '/', method: 'GET', headers: ['a'] })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
    await expect(client.request({ path: '/', method: 'GET', headers: { 'x-a': 'b\r\nx-injected: 1' } })).rejects.toBeInstanceOf(
      errors.InvalidArgumentError,
    );
    await expect(client.request({ path: '/a b', method: 'GET' })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
    await expect(client.request({ path: '/', method: 'G\nET' })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
  });
});
