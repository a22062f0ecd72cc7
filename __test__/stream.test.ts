// stream(): the response written straight into the factory's Writable — result, trailers,
// backpressure, and every way the factory or the Writable can fail the request.
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import type { StreamData, StreamFactoryData } from '../ts/index.js';
import { BodyProgress, httpServer, type Running, backpressuredBody, serverStaysBlocked } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const track = cleanup.track;
async function serve(...args: Parameters<typeof httpServer>): Promise<Running<import('node:http').Server>> {
  return track(await httpServer(...args));
}

/** A Writable collecting what it is given; `delayMs` makes each write slow. */
function sink(opts: { delayMs?: number; highWaterMark?: number } = {}): Writable & { text(): string; chunks: Buffer[] } {
  const chunks: Buffer[] = [];
  const w = new Writable({
    highWaterMark: opts.highWaterMark,
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      if (opts.delayMs) setTimeout(done, opts.delayMs);
      else done();
    },
  });
  return Object.assign(w, { chunks, text: () => Buffer.concat(chunks).toString() });
}

describe('stream()', () => {
  it('hands status, headers, opaque and context to the factory and resolves when the Writable finishes', async () => {
    const srv = await serve((_req, res) => {
      res.setHeader('x-kind', 'streamed');
      res.end('hello stream');
    });
    const client = track(new Client(srv.origin));
    let seen: StreamFactoryData<{ id: number }> | undefined;
    const out = sink();
    const data = await client.stream({ path: '/', method: 'GET', opaque: { id: 7 } }, (d) => {
      seen = d;
      return out;
    });
    expect(seen!.statusCode).toBe(200);
    expect(seen!.headers['x-kind']).toBe('streamed');
    expect(seen!.opaque).toEqual({ id: 7 });
    expect(typeof seen!.context).toBe('object');
    expect(out.text()).toBe('hello stream');
    expect(out.writableFinished).toBe(true);
    expect(data.opaque).toEqual({ id: 7 });
    expect(data.trailers).toEqual({});
    expect(data.context).toBe(seen!.context);
  });

  it('takes a callback instead of returning a promise', async () => {
    const srv = await serve((_req, res) => res.end('cb'));
    const client = track(new Client(srv.origin));
    const out = sink();
    const data = await new Promise<StreamData<string>>((resolve, reject) => {
      const ret = client.stream({ path: '/', method: 'GET', opaque: 'o' }, () => out, (err, d) =>
        err ? reject(err) : resolve(d),
      );
      expect(ret).toBeUndefined();
    });
    expect(data.opaque).toBe('o');
    expect(out.text()).toBe('cb');
  });

  it('fills trailers from a chunked response', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { Trailer: 'X-Checksum' });
      res.write('part one, ');
      res.write('part two');
      res.addTrailers({ 'X-Checksum': 'abc123' });
      res.end();
    });
    const client = track(new Client(srv.origin));
    const out = sink();
    const data = await client.stream({ path: '/', method: 'GET' }, () => out);
    expect(out.text()).toBe('part one, part two');
    expect(data.trailers).toEqual({ 'x-checksum': 'abc123' });
  });

  it('respects the Writable’s backpressure: the request pauses on write() false and resumes on drain', async () => {
    const total = 64 * 1024 * 1024; // 64 MiB: far beyond socket buffers and the engine's queue bound
    const progress = new BodyProgress();
    const srv = await serve(backpressuredBody(total, 'y', progress));
    const client = track(new Client(srv.origin));
    // A Writable that stalls on its first write until the test lets it go.
    let received = 0;
    let stalled: (() => void) | null = null;
    let release = false;
    let falseWrites = 0;
    const out = new Writable({
      highWaterMark: 16 * 1024,
      write(c: Buffer, _enc, done) {
        received += c.length;
        if (release) done();
        else stalled = done;
      },
    });
    const write = out.write.bind(out);
    out.write = ((c: Buffer) => {
      const ok = write(c);
      if (!ok) falseWrites++;
      return ok;
    }) as typeof out.write;
    let drains = 0;
    out.on('drain', () => drains++);
    const pending = client.stream({ path: '/', method: 'GET' }, () => out);
    // Let whatever was in flight when the pause landed arrive, then show nothing more comes.
    await serverStaysBlocked(progress);
    const buffered = out.writableLength;
    await serverStaysBlocked(progress);
    expect(out.writableLength).toBe(buffered);
    expect(falseWrites).toBeGreaterThan(0);
    // Bounded by the engine's queue (8 MiB), not the 64 MiB body.
    expect(buffered).toBeLessThan(16 * 1024 * 1024);
    release = true;
    (stalled as (() => void) | null)?.();
    await pending;
    expect(received).toBe(total);
    expect(drains).toBeGreaterThan(0);
  });

  it('a Writable that already needs drain when the factory returns it gets the body only after its drain', async () => {
    const srv = await serve((_req, res) => res.end('b'.repeat(64 * 1024)));
    const client = track(new Client(srv.origin));
    const out = sink({ delayMs: 1, highWaterMark: 16 });
    let writesWhileFull = 0;
    const write = out.write.bind(out);
    const data = await client.stream({ path: '/', method: 'GET', opaque: 'full' }, () => {
      // The factory's own first write fills the Writable before ferro sees it.
      write(Buffer.from('prefix'.repeat(8)));
      out.write = ((c: Buffer) => {
        if (out.writableNeedDrain) writesWhileFull++;
        return write(c);
      }) as typeof out.write;
      return out;
    });
    expect(data.opaque).toBe('full');
    expect(writesWhileFull).toBe(0);
    expect(out.text()).toBe('prefix'.repeat(8) + 'b'.repeat(64 * 1024));
  });

  it('delivers 1xx responses to onInfo', async () => {
    const srv = await serve((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.end('after hints');
    });
    const client = track(new Client(srv.origin));
    const infos: number[] = [];
    const out = sink();
    await client.stream({ path: '/', method: 'GET', onInfo: ({ statusCode }) => infos.push(statusCode) }, () => out);
    expect(infos).toEqual([103]);
    expect(out.text()).toBe('after hints');
  });

  it('a factory that throws fails the request with that error; the client stays usable', async () => {
    const srv = await serve((_req, res) => res.end('x'.repeat(1000)));
    const client = track(new Client(srv.origin));
    const boom = new Error('factory boom');
    await expect(
      client.stream({ path: '/', method: 'GET' }, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    const out = sink();
    await client.stream({ path: '/', method: 'GET' }, () => out);
    expect(out.text()).toHaveLength(1000);
  });

  it('a factory returning something other than a Writable fails with InvalidReturnValueError', async () => {
    const srv = await serve((_req, res) => res.end('x'));
    const client = track(new Client(srv.origin));
    const pending = client.stream({ path: '/', method: 'GET' }, () => ({}) as Writable);
    await expect(pending).rejects.toBeInstanceOf(errors.InvalidReturnValueError);
    await expect(pending).rejects.toMatchObject({ code: 'UND_ERR_INVALID_RETURN_VALUE' });
  });

  it('a Writable that errors aborts the request and rejects with its error', async () => {
    let serverSawClose!: () => void;
    const closed = new Promise<void>((r) => (serverSawClose = r));
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('first');
      res.on('close', serverSawClose);
      // Never ends on its own: only the abort can finish this request.
    });
    const client = track(new Client(srv.origin));
    const bad = new Error('disk full');
    const out = new Writable({
      write(_chunk, _enc, done) {
        done(bad);
      },
    });
    await expect(client.stream({ path: '/', method: 'GET' }, () => out)).rejects.toBe(bad);
    expect(out.destroyed).toBe(true);
    await closed;
  });

  it('an aborted signal fails the request with RequestAbortedError, before or during the response', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const client = track(new Client(srv.origin));

    const early = new AbortController();
    early.abort();
    await expect(client.stream({ path: '/', method: 'GET', signal: early.signal }, () => sink())).rejects.toBeInstanceOf(
      errors.RequestAbortedError,
    );

    const ee = new EventEmitter();
    const out = sink();
    const pending = client.stream({ path: '/', method: 'GET', signal: ee }, () => {
      setImmediate(() => ee.emit('abort'));
      return out;
    });
    await expect(pending).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(out.destroyed).toBe(true);
  });

  it('rejects bad arguments: a missing factory, CONNECT, a bad callback', async () => {
    const client = track(new Client('http://127.0.0.1:1'));
    await expect(client.stream({ path: '/', method: 'GET' }, undefined as never)).rejects.toBeInstanceOf(
      errors.InvalidArgumentError,
    );
    await expect(client.stream({ path: '/', method: 'CONNECT' }, () => sink())).rejects.toBeInstanceOf(
      errors.InvalidArgumentError,
    );
    expect(() => client.stream({ path: '/', method: 'GET' }, () => sink(), 'nope' as never)).toThrow(
      errors.InvalidArgumentError,
    );
  });

  it('reports a connection failure to the callback with the opaque', async () => {
    const client = track(new Client('http://127.0.0.1:1'));
    const [err, data] = await new Promise<[Error | null, StreamData<string>]>((resolve) =>
      client.stream({ path: '/', method: 'GET', opaque: 'ctx' }, () => sink(), (e, d) => resolve([e, d])),
    );
    expect(err).toMatchObject({ constructor: Error, code: 'ECONNREFUSED' });
    expect(data.opaque).toBe('ctx');
  });
});
