// interceptors.decompress against real local servers: node:http with zlib-compressed bodies, raw
// net servers for exact (corrupt, truncated) bytes. Decoding runs in the engine (src/decoder.rs).
import { afterEach, describe, expect, it, vi } from 'vitest';
import zlib from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Client, errors, interceptors } from '../ts/index.js';
import type { Dispatcher, DispatchController, DispatchHandler, IncomingHeaders } from '../ts/index.js';
import { ContentDecodingError } from '../ts/native/coding.js';
import { binding } from '../ts/native/binding.js';
import { fetch } from '../ts/index.js';
import { BodyProgress, httpServer, pumpBackpressured, rawServer, serverStaysBlocked, type Running } from './fixtures/servers.js';
import { ZSTD_OF_GZIP, ZSTD_PLAIN, ZSTD_TEXT } from './fixtures/zstd.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Running<import('node:http').Server>> {
  const running = await httpServer(handler);
  cleanup.push(() => running.close());
  return running;
}

function composed(origin: string, opts?: Parameters<typeof interceptors.decompress>[0]): Dispatcher {
  const client = new Client(origin);
  cleanup.push(() => client.destroy());
  return client.compose(interceptors.decompress(opts));
}

/** Answers every request with `body` and `headers`. */
async function fixed(status: number, headers: Record<string, string>, body: Buffer | string): Promise<Dispatcher> {
  const srv = await serve((_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  });
  return composed(srv.origin);
}

const TEXT = 'decompress me, please. '.repeat(3000);
const encoders: [string, (b: Buffer) => Buffer][] = [
  ['gzip', (b) => zlib.gzipSync(b)],
  ['x-gzip', (b) => zlib.gzipSync(b)],
  ['deflate', (b) => zlib.deflateSync(b)],
  ['x-compress', (b) => zlib.deflateSync(b)],
  ['br', (b) => zlib.brotliCompressSync(b)],
];

describe('each coding', () => {
  for (const [coding, encode] of encoders) {
    it(coding, async () => {
      const d = await fixed(200, { 'content-encoding': coding, 'x-other': 'kept' }, encode(Buffer.from(TEXT)));
      const res = await d.request({ path: '/', method: 'GET' });
      expect(await res.body.text()).toBe(TEXT);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['x-other']).toBe('kept');
    });
  }

  it('raw deflate, as some servers send for "deflate"', async () => {
    const d = await fixed(200, { 'content-encoding': 'deflate' }, zlib.deflateRawSync(TEXT));
    expect(await (await d.request({ path: '/', method: 'GET' })).body.text()).toBe(TEXT);
  });

  it('zstd, on every supported Node (the engine decodes it)', async () => {
    const d = await fixed(200, { 'content-encoding': 'zstd' }, ZSTD_TEXT);
    expect(await (await d.request({ path: '/', method: 'GET' })).body.text()).toBe(ZSTD_PLAIN);
  });
});

describe('several codings and names', () => {
  it('undoes them in reverse order', async () => {
    const body = zlib.brotliCompressSync(zlib.deflateSync(zlib.gzipSync(TEXT)));
    const d = await fixed(200, { 'content-encoding': 'gzip, deflate, br' }, body);
    const res = await d.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe(TEXT);
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('gzip then zstd', async () => {
    const d = await fixed(200, { 'content-encoding': 'gzip,zstd' }, ZSTD_OF_GZIP);
    expect(await (await d.request({ path: '/', method: 'GET' })).body.text()).toBe(ZSTD_PLAIN);
  });

  it('repeated content-encoding fields are one list', async () => {
    const srv = await serve((_req, res) => {
      res.setHeader('content-encoding', ['gzip', 'br']);
      res.end(zlib.brotliCompressSync(zlib.gzipSync(TEXT)));
    });
    expect(await (await composed(srv.origin).request({ path: '/', method: 'GET' })).body.text()).toBe(TEXT);
  });

  it('names are case-insensitive', async () => {
    const d = await fixed(200, { 'content-encoding': 'GZip, Br' }, zlib.brotliCompressSync(zlib.gzipSync(TEXT)));
    expect(await (await d.request({ path: '/', method: 'GET' })).body.text()).toBe(TEXT);
  });

  it('an unknown coding passes the body and headers through unchanged', async () => {
    const body = zlib.gzipSync(TEXT);
    const d = await fixed(200, { 'content-encoding': 'gzip, snappy', 'content-length': String(body.length) }, body);
    const res = await d.request({ path: '/', method: 'GET' });
    expect(Buffer.from(await res.body.arrayBuffer())).toEqual(body);
    expect(res.headers['content-encoding']).toBe('gzip, snappy');
    expect(res.headers['content-length']).toBe(String(body.length));
  });

  it('identity is no coding', async () => {
    const d = await fixed(200, { 'content-encoding': 'identity' }, 'plain');
    const res = await d.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('plain');
  });

  it('more than five codings fail the request', async () => {
    const d = await fixed(200, { 'content-encoding': 'gzip,gzip,gzip,gzip,gzip,gzip' }, 'x');
    const err = await d.request({ path: '/', method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentDecodingError);
    expect((err as ContentDecodingError).code).toBe('ERR_TOO_MANY_CODINGS');
  });

  it('an empty body with a coding is an empty body', async () => {
    const d = await fixed(200, { 'content-encoding': 'gzip' }, '');
    expect(await (await d.request({ path: '/', method: 'GET' })).body.text()).toBe('');
  });
});

describe('skip rules', () => {
  const gz = zlib.gzipSync(TEXT);

  it('leaves error responses alone by default', async () => {
    const d = await fixed(404, { 'content-encoding': 'gzip' }, gz);
    const res = await d.request({ path: '/', method: 'GET' });
    expect(res.statusCode).toBe(404);
    expect(Buffer.from(await res.body.arrayBuffer())).toEqual(gz);
    expect(res.headers['content-encoding']).toBe('gzip');
  });

  it('decodes error responses with skipErrorResponses: false', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(500, { 'content-encoding': 'gzip' });
      res.end(gz);
    });
    const res = await composed(srv.origin, { skipErrorResponses: false }).request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe(TEXT);
  });

  it('skips 204 and 304 by default and any listed status', async () => {
    const srv = await serve((req, res) => {
      const status = Number(req.url!.slice(1));
      res.writeHead(status, { 'content-encoding': 'gzip' });
      res.end(status === 200 || status === 201 ? gz : undefined);
    });
    const d = composed(srv.origin);
    for (const status of [204, 304]) {
      const res = await d.request({ path: `/${status}`, method: 'GET' });
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(await res.body.text()).toBe('');
    }
    const custom = composed(srv.origin, { skipStatusCodes: [201] });
    const skipped = await custom.request({ path: '/201', method: 'GET' });
    expect(Buffer.from(await skipped.body.arrayBuffer())).toEqual(gz);
    expect(await (await custom.request({ path: '/200', method: 'GET' })).body.text()).toBe(TEXT);
  });

  it('skips HEAD', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(gz.length) });
      res.end();
    });
    const res = await composed(srv.origin).request({ path: '/', method: 'HEAD' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-length']).toBe(String(gz.length));
  });

  it('rejects bad options with InvalidArgumentError', () => {
    const bad = [{ maxSize: -1 }, { skipStatusCodes: 'x' }, { skipErrorResponses: 1 }, { maxSize: 1.5 }];
    for (const opts of bad) {
      expect(() => interceptors.decompress(opts as never)).toThrow(errors.InvalidArgumentError);
    }
  });
});

/** A raw server answering with exactly `head` + `body`, then closing. */
async function raw(head: string, body: Buffer): Promise<Dispatcher> {
  const srv = await rawServer((socket) => {
    socket.once('data', () => socket.end(Buffer.concat([Buffer.from(head), body])));
  });
  cleanup.push(() => srv.close());
  return composed(srv.origin);
}

describe('corrupt and truncated bodies', () => {
  it('a corrupt stream fails the body with Z_DATA_ERROR', async () => {
    const bad = Buffer.from('\x1f\x8b\x08\x00 this is not deflate data at all');
    const d = await raw(`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${bad.length}\r\n\r\n`, bad);
    const res = await d.request({ path: '/', method: 'GET' });
    const err = await res.body.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentDecodingError);
    expect((err as ContentDecodingError).code).toBe('Z_DATA_ERROR');
  });

  for (const [coding, encode] of [...encoders, ['zstd', () => ZSTD_TEXT] as const]) {
    it(`a ${coding} stream cut short (whole HTTP body) fails with Z_BUF_ERROR`, async () => {
      const full = encode(Buffer.from(TEXT));
      const cut = full.subarray(0, full.length - 3);
      const d = await raw(`HTTP/1.1 200 OK\r\ncontent-encoding: ${coding}\r\ncontent-length: ${cut.length}\r\n\r\n`, cut);
      const res = await d.request({ path: '/', method: 'GET' });
      const err = await res.body.text().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ContentDecodingError);
      expect((err as ContentDecodingError).code).toBe('Z_BUF_ERROR');
    });
  }

  it('a gzip body whose connection drops mid-body fails with the framing error, not a short success', async () => {
    const gz = zlib.gzipSync(TEXT);
    const half = gz.subarray(0, gz.length >> 1);
    const d = await raw(`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${gz.length}\r\n\r\n`, half);
    const res = await d.request({ path: '/', method: 'GET' });
    const err = await res.body.text().catch((e: unknown) => e);
    // A keep-alive response cut short: the peer went away (undici's SocketError).
    expect(err).toMatchObject({ constructor: errors.SocketError, message: 'other side closed' });
  });

  it('a decompression bomb stops at maxSize with ResponseExceededMaxSizeError', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const res = await composed(srv.origin, { maxSize: 1024 * 1024 }).request({ path: '/', method: 'GET' });
    const err = await res.body.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ResponseExceededMaxSizeError);
    expect((err as { code: string }).code).toBe('UND_ERR_RES_EXCEEDED_MAX_SIZE');
  });
});

/** A dispatch handler recording what reaches it. */
function recorder(onData?: (controller: DispatchController, chunk: Buffer) => void): {
  handler: DispatchHandler;
  chunks: Buffer[];
  headers: () => IncomingHeaders | null;
  controller: () => DispatchController;
  done: Promise<Error | null>;
} {
  const chunks: Buffer[] = [];
  let headers: IncomingHeaders | null = null;
  let ctl: DispatchController | null = null;
  let settle!: (e: Error | null) => void;
  const done = new Promise<Error | null>((r) => (settle = r));
  const handler: DispatchHandler = {
    onRequestStart: (c) => void (ctl = c),
    onResponseStart: (_c, _s, h) => void (headers = h),
    onResponseData: (c, chunk) => {
      chunks.push(chunk);
      onData?.(c, chunk);
    },
    onResponseEnd: () => settle(null),
    onResponseError: (_c, e) => settle(e),
  };
  return { handler, chunks, headers: () => headers, controller: () => ctl!, done };
}

describe('streaming', () => {
  it('a 10 MB body streams: the first decoded chunk arrives before the server writes the rest', async () => {
    const piece = Buffer.alloc(1024 * 1024, 'streamed ');
    let sawFirst!: () => void;
    const firstSeen = new Promise<void>((r) => (sawFirst = r));
    let serverFinished = false;
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      const gz = zlib.createGzip();
      gz.pipe(res);
      gz.write(piece);
      gz.flush(() => {
        // Nothing more until the client has decoded bytes: a buffering decoder deadlocks here.
        void firstSeen.then(() => {
          for (let i = 1; i < 10; i++) gz.write(piece);
          serverFinished = true;
          gz.end();
        });
      });
    });
    let finishedAtFirst: boolean | null = null;
    const rec = recorder(() => {
      if (finishedAtFirst === null) {
        finishedAtFirst = serverFinished;
        sawFirst();
      }
    });
    composed(srv.origin).dispatch({ path: '/', method: 'GET' }, rec.handler);
    expect(await rec.done).toBeNull();
    expect(finishedAtFirst).toBe(false);
    const body = Buffer.concat(rec.chunks);
    expect(body.length).toBe(10 * piece.length);
    expect(body.equals(Buffer.concat(Array(10).fill(piece)))).toBe(true);
    // The controller's raw headers agree with the headers handed over.
    const raw = rec.controller().rawHeaders!.map((b) => b.toString('latin1').toLowerCase());
    expect(raw).not.toContain('content-encoding');
    expect(raw).toContain('date');
    // Output comes in bounded steps, never one huge buffer.
    expect(Math.max(...rec.chunks.map((c) => c.length))).toBeLessThanOrEqual(64 * 1024);
  });

  it('pause() holds back decoded bytes and the socket; resume() delivers the rest', async () => {
    // Stored (level 0) gzip: compressed size = decoded size, so socket backpressure is visible.
    const plain = Buffer.concat(Array.from({ length: 24 }, () => randomBytes(1024 * 1024)));
    const gz = zlib.gzipSync(plain, { level: 0 });
    const progress = new BodyProgress();
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(gz.length) });
      pumpBackpressured(res, gz.length, (at) => gz.subarray(at, at + 64 * 1024), progress);
    });
    let received = 0;
    let paused = false;
    let onPause!: () => void;
    const pausedNow = new Promise<void>((r) => (onPause = r));
    const rec = recorder((c, chunk) => {
      received += chunk.length;
      if (!paused) {
        paused = true;
        c.pause();
        onPause();
      }
    });
    composed(srv.origin).dispatch({ path: '/', method: 'GET' }, rec.handler);
    await pausedNow;
    // Whatever was in flight settles; then nothing more may arrive while paused.
    await serverStaysBlocked(progress);
    expect(received).toBe(rec.chunks[0]!.length);
    expect(rec.controller().paused).toBe(true);
    expect(progress.written).toBeLessThan(gz.length);
    rec.controller().resume();
    expect(await rec.done).toBeNull();
    expect(received).toBe(plain.length);
    const hash = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    expect(hash(Buffer.concat(rec.chunks))).toBe(hash(plain));
  });
});

// Each decoder's state lives in the engine (a brotli window is MiBs) where V8's GC cannot see it:
// it must be freed when its body ends, fails or is abandoned, not when a GC gets to the JS object.
// 1 MiB brotli bodies decoded back to back had held ~4 MiB each until a GC: 900 MB of RSS.
describe('decoder state is freed with its body', () => {
  // 1 MiB of hex digits: several compressed chunks, a full-size brotli window. Fixed content, not
  // random: brotli has no checksum, so whether a corrupted stream fails depends on the bytes.
  const BIG = Buffer.from(Array.from({ length: 16384 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join(''));
  const BR = zlib.brotliCompressSync(BIG, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });

  async function brServer(body: Buffer = BR): Promise<string> {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'br', 'content-length': String(body.length) });
      res.end(body);
    });
    return srv.origin;
  }

  it('at the end of each body, before any GC', async () => {
    expect(binding.liveDecodersCount()).toBe(0);
    const d = composed(await brServer());
    for (let i = 0; i < 5; i++) {
      const res = await d.request({ path: '/', method: 'GET' });
      expect((await res.body.arrayBuffer()).byteLength).toBe(BIG.length);
      expect(binding.liveDecodersCount()).toBe(0);
    }
  });

  it('when the reader destroys the body half-way', async () => {
    const d = composed(await brServer());
    const res = await d.request({ path: '/', method: 'GET' });
    const it = res.body[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    expect(binding.liveDecodersCount()).toBe(1);
    res.body.destroy();
    await vi.waitFor(() => expect(binding.liveDecodersCount()).toBe(0));
  });

  it('when the stream is corrupt', async () => {
    const bad = Buffer.from(BR);
    bad.fill(0xff, 1000, 2000);
    const d = composed(await brServer(bad));
    const res = await d.request({ path: '/', method: 'GET' });
    const err = await res.body.arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentDecodingError);
    expect(binding.liveDecodersCount()).toBe(0);
  });

  it('when a fetch body is cancelled', async () => {
    const origin = await brServer();
    const res = await fetch(origin);
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    expect(binding.liveDecodersCount()).toBe(1);
    await reader.cancel();
    await vi.waitFor(() => expect(binding.liveDecodersCount()).toBe(0));
  });
});
