// Large response chunks come from the engine as Buffers of their own (src/queue.rs, DATA_OWN), and
// a body read whole from one such chunk hands its memory to the caller instead of a copy
// (ts/api/body.ts, #wholeBuffer). These tests pin both halves, and that the copy is skipped only
// when nothing else could be holding the chunk.
import { describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import { Client } from '../ts/index.js';
import type { DispatcherComposeInterceptor, DispatchHandler } from '../ts/core/types.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { makeBody } from './fixtures/body-source.js';

const SIZE = 64 * 1024;
const payload = Buffer.alloc(SIZE, 0).map((_, i) => (i * 7) & 0xff);

describe('a body read whole', () => {
  it('hands out the memory of a sole, exclusive chunk that spans its buffer', async () => {
    const { body } = makeBody();
    const chunk = Buffer.from(payload);
    body.pushChunk(chunk, true);
    body.push(null);
    expect(await body.arrayBuffer()).toBe(chunk.buffer);
  });

  it('copies what someone else may hold, a view into a larger buffer, or several chunks', async () => {
    const shared = Buffer.from(payload);
    const a = makeBody();
    a.body.pushChunk(shared, false);
    a.body.push(null);
    const ab = await a.body.arrayBuffer();
    expect(ab).not.toBe(shared.buffer);
    expect(Buffer.from(ab).equals(payload)).toBe(true);

    const plain = makeBody();
    plain.body.push(shared);
    plain.body.push(null);
    expect(await plain.body.arrayBuffer()).not.toBe(shared.buffer);

    const view = Buffer.from(payload).subarray(1);
    const b = makeBody();
    b.body.pushChunk(view, true);
    b.body.push(null);
    const bytes = await b.body.bytes();
    expect(bytes.buffer).not.toBe(view.buffer);
    expect(Buffer.from(bytes).equals(view)).toBe(true);

    const c = makeBody();
    const halves = [Buffer.from(payload.subarray(0, 100)), Buffer.from(payload.subarray(100))];
    c.body.pushChunk(halves[0]!, true);
    c.body.pushChunk(halves[1]!, true);
    c.body.push(null);
    expect(Buffer.from(await c.body.arrayBuffer()).equals(payload)).toBe(true);
  });

  it('copies a chunk a stream reader has seen', async () => {
    const { body } = makeBody();
    const chunk = Buffer.from(payload);
    const seen: Buffer[] = [];
    body.on('data', (c: Buffer) => seen.push(c));
    body.pushChunk(chunk, true);
    body.push(null);
    const ab = await body.arrayBuffer();
    expect(ab).not.toBe(chunk.buffer);
  });
});

describe('large bodies from the engine', () => {
  const cleanup = useCleanup();

  async function serve(): Promise<Client> {
    const srv = await httpServer((_req, res) => res.end(payload));
    cleanup.push(() => srv.close());
    return cleanup.track(new Client(srv.origin));
  }

  it('arrive in chunks that each span a buffer of their own', async () => {
    const client = await serve();
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const handler: DispatchHandler = {
        onRequestStart: () => {},
        onResponseStart: () => {},
        onResponseData: (_c, chunk) => void chunks.push(chunk),
        onResponseEnd: () => resolve(),
        onResponseError: (_c, err) => reject(err),
      };
      client.dispatch({ path: '/', method: 'GET' }, handler);
    });
    expect(Buffer.concat(chunks).equals(payload)).toBe(true);
    // A loopback segment holds ~64 KiB, so at least one read brings 32 KiB of body or more.
    const large = chunks.filter((c) => c.length >= 32 * 1024);
    expect(large.length).toBeGreaterThan(0);
    for (const c of large) expect([c.byteOffset, c.buffer.byteLength]).toEqual([0, c.length]);
  });

  it('read through request() are right, and a copy wherever an interceptor or a subscriber saw the chunks', async () => {
    const client = await serve();
    const direct = await client.request({ path: '/', method: 'GET' });
    expect(Buffer.from(await direct.body.arrayBuffer()).equals(payload)).toBe(true);

    // An interceptor that keeps every chunk it passes on (as a cache would).
    const kept: Buffer[] = [];
    const keeping: DispatcherComposeInterceptor = (dispatch) => (opts, handler) =>
      dispatch(opts, {
        onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
        onResponseStart: (c, s, h, m) => handler.onResponseStart?.(c, s, h, m),
        onResponseData: (c, chunk) => {
          kept.push(chunk);
          handler.onResponseData?.(c, chunk);
        },
        onResponseEnd: (c, t) => handler.onResponseEnd?.(c, t),
        onResponseError: (c, e) => handler.onResponseError?.(c, e),
      });
    const viaInterceptor = await client.compose(keeping).request({ path: '/', method: 'GET' });
    new Uint8Array(await viaInterceptor.body.arrayBuffer()).fill(0xee);
    expect(Buffer.concat(kept).equals(payload)).toBe(true);

    const received: Buffer[] = [];
    const onChunk = (msg: unknown): void => void received.push((msg as { chunk: Buffer }).chunk);
    dc.subscribe('lib:request:bodyChunkReceived', onChunk);
    try {
      const watched = await client.request({ path: '/', method: 'GET' });
      new Uint8Array(await watched.body.arrayBuffer()).fill(0xee);
    } finally {
      dc.unsubscribe('lib:request:bodyChunkReceived', onChunk);
    }
    expect(Buffer.concat(received).equals(payload)).toBe(true);
  });
});
