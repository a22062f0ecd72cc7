// Stream request bodies as undici takes them (issue 35, items 2, 3 and 14): anything with pipe()
// and on() is a stream; a response that completes first leaves the caller's stream to its owner;
// and the lifecycle rules of a streamed body (empty, known length, mismatch, end, late error).
import { describe, expect, it } from 'vitest';
import { EventEmitter, once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { echoFramingServer, httpServer, rawServer } from './fixtures/servers.js';
import { ca, h2Server } from './fixtures/h2.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const track = cleanup.track;

const echoServer = async () => track(await echoFramingServer('none'));

/**
 * A pre-streams2 stream as `form-data`'s CombinedStream or readable-stream@2 are: an EventEmitter
 * with pipe / pause / resume that emits 'data' while flowing and starts only when resumed.
 */
class LegacyStream extends EventEmitter {
  readable = true;
  paused = true;
  pauses = 0;
  destroyed = false;
  #chunks: Buffer[];
  /** Without an end: it goes quiet when its chunks run out. */
  #endless: boolean;
  constructor(chunks: Buffer[], endless = false) {
    super();
    this.#chunks = chunks;
    this.#endless = endless;
  }
  pipe<T extends NodeJS.WritableStream>(dest: T): T {
    this.on('data', (c: Buffer) => dest.write(c));
    this.on('end', () => dest.end());
    this.resume();
    return dest;
  }
  pause(): this {
    if (!this.paused) this.pauses++;
    this.paused = true;
    return this;
  }
  resume(): this {
    if (!this.paused) return this;
    this.paused = false;
    setImmediate(() => this.#flow());
    return this;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  #flow(): void {
    while (!this.paused && !this.destroyed) {
      const c = this.#chunks.shift();
      if (c === undefined) {
        if (this.#endless) return;
        this.readable = false;
        this.emit('end');
        return;
      }
      this.emit('data', c);
    }
  }
}

describe('duck-typed streams (anything with pipe and on)', () => {
  it('a legacy stream that starts on resume() is sent whole', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = new LegacyStream([Buffer.from('one,'), Buffer.from('two,'), Buffer.from('three')]);
    const res = await client.request({ path: '/', method: 'POST', body: body as unknown as Readable });
    expect(res.headers['x-te']).toBe('chunked');
    expect(await res.body.text()).toBe('one,two,three');
  });

  it('a legacy stream is paused while the engine is full, and arrives byte-exact', async () => {
    // The server reads nothing until the source was told to pause.
    let source!: LegacyStream;
    const srv = track(
      await httpServer((req, res) => {
        req.pause();
        const parts: Buffer[] = [];
        const start = (): void => {
          req.on('data', (c: Buffer) => parts.push(c));
          req.on('end', () => res.end(String(Buffer.concat(parts).length)));
          req.resume();
        };
        const wait = (): void => (source.pauses > 0 ? start() : void setTimeout(wait, 5));
        wait();
      }),
    );
    const client = track(new Client(srv.origin));
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const chunks = Array.from({ length: 256 }, () => chunk);
    source = new LegacyStream(chunks);
    const res = await client.request({ path: '/', method: 'POST', body: source as unknown as Readable });
    expect(await res.body.text()).toBe(String(256 * chunk.length));
    expect(source.pauses).toBeGreaterThan(0);
  });

  it("a bare EventEmitter with pipe(): its data is sent, and an 'end' it emits during 'close' still counts", async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = Object.assign(new EventEmitter(), { pipe: () => {} });
    body.on('close', () => body.emit('end'));
    const pending = client.request({ path: '/', method: 'POST', body: body as unknown as Readable });
    setImmediate(() => {
      body.emit('data', '');
      body.emit('data', Buffer.from('from an '));
      body.emit('data', 'emitter');
      body.emit('close');
    });
    const res = await pending;
    expect(await res.body.text()).toBe('from an emitter');
  });

  it("a legacy stream's 'error' fails the request with that error", async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = new LegacyStream([Buffer.from('partial')], true);
    const boom = new Error('legacy source failed');
    body.once('data', () => setImmediate(() => body.emit('error', boom)));
    await expect(client.request({ path: '/', method: 'POST', body: body as unknown as Readable })).rejects.toBe(boom);
  });
});

/** Answers every request at once, without reading its body, and ends the response. */
async function earlyServer() {
  return track(
    await httpServer((req, res) => {
      res.end('early');
    }),
  );
}

describe('a response that completes before the body was sent', () => {
  it("leaves the caller's stream undestroyed, without ferro's listeners, for its owner to use", async () => {
    const srv = await earlyServer();
    const client = track(new Client(srv.origin));
    const body = new PassThrough();
    body.write('first part');
    const dataListeners = body.listenerCount('data');
    const res = await client.request({ path: '/', method: 'PUT', body });
    expect(await res.body.text()).toBe('early');
    // The settle is reported after the response's end: give it the turn it takes.
    await new Promise((r) => setImmediate(r));
    expect(body.destroyed).toBe(false);
    expect(body.listenerCount('data')).toBe(dataListeners);
    // The owner still has it: what it writes now can still be read.
    body.end('rest');
    body.resume();
    const parts: Buffer[] = [];
    body.on('data', (c: Buffer) => parts.push(c));
    await once(body, 'end');
    expect(Buffer.concat(parts).toString()).toContain('rest');
  });

  it('a proxy forwarding its incoming request can still answer its own client', async () => {
    const upstream = await earlyServer();
    const reply = await throughProxy(upstream.origin);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('proxied early');
    expect(reply.incoming.destroyed).toBe(false);
  });
});

/**
 * A node:http proxy forwarding its incoming request to `upstream` through ferro, with the
 * IncomingMessage as the body: it answers 502 when that fails. Its client sends part of its body
 * and waits for the answer before the rest.
 */
async function throughProxy(upstream: string): Promise<{ status: number; text: string; incoming: IncomingMessage }> {
  const proxyClient = track(new Client(upstream));
  const incoming: IncomingMessage[] = [];
  const proxy = track(
    await httpServer((req, res) => {
      incoming.push(req);
      proxyClient.request({ path: '/', method: 'PUT', body: req }).then(
        async ({ statusCode, body }) => {
          const text = await body.text();
          res.writeHead(statusCode);
          res.end(`proxied ${text}`);
        },
        () => {
          res.writeHead(502);
          res.end('upstream failed');
        },
      );
    }),
  );
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${proxy.origin}/`, { method: 'PUT', headers: { 'transfer-encoding': 'chunked' } });
    req.on('error', reject);
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString(), incoming: incoming[0]! });
      });
      res.on('error', reject);
    });
    req.write('the first part of a long upload');
  });
}

describe('a request that fails while its body is read', () => {
  it("destroys a proxy's incoming request but not its socket: the proxy can still answer", async () => {
    // The upstream drops the connection once the request's first bytes arrive.
    const upstream = track(await rawServer((socket) => socket.once('data', () => socket.destroy())));
    const reply = await throughProxy(upstream.origin);
    expect(reply.status).toBe(502);
    expect(reply.text).toBe('upstream failed');
    expect(reply.incoming.destroyed).toBe(true);
  });
});

describe('the lifecycle of a streamed body', () => {
  it('an empty stream that has ended is sent with content-length: 0, and destroyed at its end', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = new Readable({ autoDestroy: false, read() {} });
    body.push(null);
    const res = await client.request({ path: '/', method: 'POST', body });
    expect(res.headers['x-cl']).toBe('0');
    expect(res.headers['x-te']).toBe('none');
    expect(await res.body.text()).toBe('');
    expect(body.destroyed).toBe(true);
  });

  it('a body that does not destroy itself is destroyed at its end', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = new Readable({ autoDestroy: false, read() {} });
    body.push('abc');
    setImmediate(() => body.push(null));
    const res = await client.request({ path: '/', method: 'POST', body });
    expect(await res.body.text()).toBe('abc');
    expect(body.destroyed).toBe(true);
  });

  it("GET and HEAD: the caller's content-length gives way to the body's own length", async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const body = new Readable({
      read() {
        this.push('asd');
        this.push(null);
      },
    });
    const get = await client.request({ path: '/', method: 'GET', headers: { 'content-length': '4' }, body });
    expect(get.headers['x-cl']).toBe('3');
    expect(await get.body.text()).toBe('asd');
    const head = await client.request({ path: '/', method: 'HEAD', headers: { 'content-length': '10' } });
    expect(head.headers['x-cl']).toBe('none');
    await head.body.text();
  });

  for (const kind of ['Readable', 'async iterable'] as const) {
    it(`a ${kind} longer than its content-length fails before anything is sent`, async () => {
      let received = '';
      const srv = track(
        await rawServer((socket: Socket) => {
          socket.on('error', () => {});
          socket.on('data', (c: Buffer) => {
            received += c.toString('latin1');
            if (received.endsWith('\r\n\r\n')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
          });
        }),
      );
      const client = track(new Client(srv.origin));
      const stream = new Readable({
        read() {
          setImmediate(() => {
            this.push('asdasdasdkajsdnasdkjasnd');
            this.push(null);
          });
        },
      });
      const body = kind === 'Readable' ? stream : (async function* () { yield* stream; })();
      await expect(
        client.request({ path: '/', method: 'PUT', headers: { 'content-length': '10' }, body }),
      ).rejects.toBeInstanceOf(errors.RequestContentLengthMismatchError);
      // The next request is the first thing the server hears.
      await (await client.request({ path: '/next', method: 'GET' })).body.text();
      expect(received.split('\r\n')[0]).toBe('GET /next HTTP/1.1');
    });
  }

  it('a stream destroyed or failed before it was passed fails the request instead of waiting for it', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const closed = new Readable({ read() {} });
    closed.push('never sent');
    closed.destroy();
    const boom = new Error('failed before');
    const failed = new Readable({ read() {} });
    failed.on('error', () => {});
    failed.destroy(boom);
    // (events.once would reject on the 'error' the second one emits first)
    await Promise.all([closed, failed].map((st) => new Promise((r) => st.once('close', r))));
    await expect(client.request({ path: '/', method: 'POST', body: closed })).rejects.toBeInstanceOf(errors.RequestAbortedError);
    await expect(client.request({ path: '/', method: 'POST', body: failed })).rejects.toBe(boom);
  });

  it("an 'error' the body emits after it ended still fails the request", async () => {
    const boom = new Error('late');
    let body!: Readable;
    const srv = track(
      await httpServer((req, res) => {
        req.resume();
        req.on('end', () => {
          // The request is on the wire and its body was read whole: then the stream fails.
          body.emit('error', boom);
          setImmediate(() => res.end('ok'));
        });
      }),
    );
    const client = track(new Client(srv.origin));
    body = new Readable({ read() {} });
    body.push(null);
    await expect(client.request({ path: '/', method: 'POST', body })).rejects.toBe(boom);
  });

  const failingSources = {
    'an async iterable with a content-length': (boom: Error) =>
      (async function* () {
        yield 'a string';
        throw boom;
      })(),
    'a chunked Readable': (boom: Error) =>
      new Readable({
        read() {
          this.push('a string');
          this.destroy(boom);
        },
      }),
  };
  for (const [what, make] of Object.entries(failingSources)) {
    it(`${what} that fails after its first chunk: that chunk still reaches the server, unterminated`, async () => {
      let got = '';
      let closed!: () => void;
      const socketClosed = new Promise<void>((r) => (closed = r));
      const srv = track(
        await rawServer((socket) => {
          socket.on('error', () => {});
          socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
          socket.on('close', () => closed());
        }),
      );
      const client = track(new Client(srv.origin));
      const boom = new Error('kaboom');
      const chunked = what.includes('chunked');
      const headers = chunked ? {} : { 'content-length': '42' };
      await expect(client.request({ path: '/', method: 'POST', headers, body: make(boom) })).rejects.toBe(boom);
      await socketClosed;
      if (chunked) {
        expect(got).toContain('transfer-encoding: chunked');
        expect(got.endsWith('\r\n\r\n8\r\na string\r\n')).toBe(true);
      } else {
        expect(got).toContain('content-length: 42');
        expect(got.endsWith('\r\n\r\na string')).toBe(true);
      }
    });
  }
  it('over HTTP/2 a source that fails midway resets its stream; the session serves the next request', async () => {
    let reset!: () => void;
    const wasReset = new Promise<void>((r) => (reset = r));
    const srv = track(
      await h2Server((stream) => {
        stream.on('close', () => {
          if (stream.rstCode !== 0) reset();
        });
        stream.on('data', () => {});
        stream.on('end', () => {
          // A reset stream may still say 'end' on its way out.
          if (stream.destroyed || stream.closed) return;
          stream.respond({ ':status': 200 });
          stream.end('ok');
        });
      }),
    );
    const client = track(new Client(srv.origin, { allowH2: true, connect: { ca } }));
    const boom = new Error('kaboom');
    async function* failing(): AsyncGenerator<string> {
      yield 'a string';
      throw boom;
    }
    await expect(client.request({ path: '/', method: 'POST', body: failing() })).rejects.toBe(boom);
    await wasReset;
    const next = await client.request({ path: '/next', method: 'POST', body: ['fine'] });
    expect(await next.body.text()).toBe('ok');
    expect(srv.sessions.length).toBe(1);
  });
});
