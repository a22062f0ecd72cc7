// The decompress, responseError and dump interceptors and the undici channel mirror as undici 8.13
// has them (issue 35 items 18 and 25), against real loopback servers.
import { afterEach, describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, errors, interceptors, publishUndiciChannels } from '../ts/index.js';
import type { Dispatcher } from '../ts/index.js';
import { ContentDecodingError } from '../ts/native/coding.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  return track(await httpServer(handler)).origin;
}

function get(d: Dispatcher, origin: string) {
  return d.request({ origin, path: '/', method: 'GET' });
}

/** Answers every request with `body` under `headers`. */
function fixed(headers: Record<string, string>, body: Buffer): Promise<string> {
  return serve((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
}

/**
 * A zstd frame with one raw block holding `text`, whose header asks for a window of
 * 2^windowLog bytes (RFC 8878 §3.1.1.1.2: exponent = windowLog - 10, mantissa 0).
 */
function zstdFrame(windowLog: number, text: string): Buffer {
  const content = Buffer.from(text);
  const block = (content.length << 3) | 1; // last block, raw
  return Buffer.concat([
    Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3]),
    Buffer.from([block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff]),
    content,
  ]);
}

describe('decompress (undici 8.13)', () => {
  const decompressing = (opts?: Parameters<typeof interceptors.decompress>[0]) =>
    track(new Agent()).compose(interceptors.decompress(opts));

  it("maxSize: ResponseExceededMaxSizeError with undici's message", async () => {
    const origin = await fixed({ 'content-encoding': 'gzip' }, zlib.gzipSync(Buffer.alloc(64 * 1024)));
    const res = await get(decompressing({ maxSize: 1024 }), origin);
    const err = await res.body.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ResponseExceededMaxSizeError);
    expect((err as Error).message).toMatch(/^Decompressed response size \(\d+\) exceeded maxSize \(1024\)$/);
  });

  it('maxSize counts each stage on its own: stages under it pass though their sum is over', async () => {
    const plain = randomBytes(700 * 1024);
    const origin = await fixed({ 'content-encoding': 'gzip, gzip' }, zlib.gzipSync(zlib.gzipSync(plain)));
    const res = await get(decompressing({ maxSize: 1024 * 1024 }), origin);
    expect(Buffer.from(await res.body.arrayBuffer()).equals(plain)).toBe(true);
  });

  it('zstd: a frame asking for a window over 8 MiB fails (RFC 9659 §3); 8 MiB decodes', async () => {
    const ok = await fixed({ 'content-encoding': 'zstd' }, zstdFrame(23, 'fits'));
    expect(await (await get(decompressing(), ok)).body.text()).toBe('fits');
    const big = await fixed({ 'content-encoding': 'zstd' }, zstdFrame(24, 'too big'));
    const err = await (await get(decompressing(), big)).body.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentDecodingError);
    expect(err).toMatchObject({ code: 'Z_DATA_ERROR' });
  });

  it('compress passes through; x-compress is still decoded as deflate (the spec; undici 8.12 dropped it)', async () => {
    const lzw = Buffer.from([0x1f, 0x9d, 0x90, 0x41, 0x00]);
    const plain = await fixed({ 'content-encoding': 'compress' }, lzw);
    const res = await get(decompressing(), plain);
    expect(res.headers['content-encoding']).toBe('compress');
    expect(Buffer.from(await res.body.arrayBuffer()).equals(lzw)).toBe(true);
    const x = await fixed({ 'content-encoding': 'x-compress' }, zlib.deflateSync('inflated'));
    expect(await (await get(decompressing(), x)).body.text()).toBe('inflated');
  });
});

describe('responseError (undici 8.13)', () => {
  it('throwOnError is accepted and ignored: an error status still rejects', async () => {
    const origin = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    });
    const d = track(new Agent()).compose(interceptors.responseError({ throwOnError: false }));
    await expect(get(d, origin)).rejects.toMatchObject({ constructor: errors.ResponseError, statusCode: 500, body: 'boom' });
  });

  it("maxSize is checked with undici's message", () => {
    for (const maxSize of [-1, 1.5, Infinity]) {
      expect(() => interceptors.responseError({ maxSize })).toThrow(
        expect.objectContaining({ constructor: errors.InvalidArgumentError, message: 'maxSize must be a non-negative integer' }),
      );
    }
  });

  it('maxSize (default 1 MiB) cuts the body and sets bodyTruncated', async () => {
    const origin = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('y'.repeat(1024 * 1024 + 10));
    });
    const err = await get(track(new Agent()).compose(interceptors.responseError()), origin).catch((e: unknown) => e);
    expect(err).toMatchObject({ bodyTruncated: true });
    expect((err as { body: string }).body).toHaveLength(1024 * 1024);
  });
});

describe('dump (undici 8.13)', () => {
  const trailing = (size: number) =>
    serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-foo' });
      res.write(Buffer.alloc(size, 'a'));
      res.addTrailers({ 'x-foo': 'bar' });
      res.end();
    });

  it('a body dumped up to the limit ends without its trailers', async () => {
    const origin = await trailing(1024 * 1024);
    const res = await get(track(new Agent()).compose(interceptors.dump()), origin);
    expect(await res.body.text()).toBe('');
    expect(res.trailers['x-foo']).toBeUndefined();
  });

  it('a body under the limit keeps its trailers', async () => {
    const origin = await trailing(1000);
    const res = await get(track(new Agent()).compose(interceptors.dump()), origin);
    expect(await res.body.text()).toBe('');
    expect(res.trailers['x-foo']).toBe('bar');
  });

  it('maxSize counts the bytes received, not the declared length: a chunked body past it fails', async () => {
    const origin = await serve((_req, res) => {
      res.write(Buffer.alloc(600));
      res.end(Buffer.alloc(600));
    });
    const err = await get(track(new Agent()).compose(interceptors.dump({ maxSize: 1000 })), origin).then(
      (r) => r.body.text(),
      (e: unknown) => e,
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ constructor: errors.RequestAbortedError, message: 'Response size (1200) larger than maxSize (1000)' });
  });
});

describe('publishUndiciChannels()', () => {
  afterEach(() => publishUndiciChannels(false));

  it('mirrors lib:request:pending-requests as undici:request:pending-requests', async () => {
    const origin = await serve((_req, res) => res.end('once'));
    const d = track(new Agent()).compose(interceptors.deduplicate());
    const seen: { type: string; size: number }[] = [];
    const listener = (m: unknown): void => {
      const { type, size } = m as { type: string; size: number };
      seen.push({ type, size });
    };
    dc.subscribe('undici:request:pending-requests', listener);
    try {
      await (await get(d, origin)).body.text();
      expect(seen).toEqual([]);
      publishUndiciChannels();
      await (await get(d, origin)).body.text();
    } finally {
      dc.unsubscribe('undici:request:pending-requests', listener);
    }
    expect(seen).toEqual([
      { type: 'added', size: 1 },
      { type: 'removed', size: 0 },
    ]);
  });
});
