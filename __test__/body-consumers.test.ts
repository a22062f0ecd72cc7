// BodyReadable keeps pushed chunks out of the Readable until someone uses the stream side (see
// ts/api/body.ts). These tests pin what that must not change: every way of reading a body sees
// every byte in order, 'end' comes before 'close', backpressure still reaches the producer, and
// failures reach the mixin consumers. First with a hand-driven producer, then on the engine.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RequestAbortedError } from '../ts/core/errors.js';
import { Client, errors } from '../ts/index.js';
import { BodyProgress, backpressuredBody, countRequests, httpServer, rawServer, readUntil, serverStaysBlocked } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { makeBody } from './fixtures/body-source.js';
import type { BodyReadable } from '../ts/api/body.js';

/** Records 'end' and 'close' as they happen. */
function lifecycle(body: Readable): string[] {
  const events: string[] = [];
  body.on('end', () => events.push('end'));
  body.on('close', () => events.push('close'));
  return events;
}

describe('a body nobody has read yet', () => {
  it('counts held bytes in readableLength and pauses the producer past highWaterMark', () => {
    const { body } = makeBody({ highWaterMark: 4 });
    expect(body.push(Buffer.from('abc'))).toBe(true);
    expect(body.readableLength).toBe(3);
    expect(body.push(Buffer.from('de'))).toBe(false);
    expect(body.readableLength).toBe(5);
    expect(body.bodyUsed).toBe(false);
  });

  it('a mixin consumer resumes a producer paused on a full hold and gets every byte', async () => {
    const { body, src } = makeBody({ highWaterMark: 4 });
    body.push(Buffer.from('abc'));
    expect(body.push(Buffer.from('def'))).toBe(false);
    const p = body.text();
    expect(src.resumes).toBe(1);
    body.push(Buffer.from('ghi'));
    body.push(null);
    expect(await p).toBe('abcdefghi');
  });

  it("text() on a complete body: 'end' then 'close', then the stream is ended and torn down", async () => {
    const { body, src } = makeBody();
    const events = lifecycle(body);
    body.push(Buffer.from('hello'));
    body.push(null);
    expect(events).toEqual([]);
    expect(await body.text()).toBe('hello');
    await once(body, 'close');
    expect(events).toEqual(['end', 'close']);
    expect(body.readableEnded).toBe(true);
    expect(body.destroyed).toBe(true);
    expect(body.errored).toBe(null);
    expect(src.aborts).toEqual([]);
    expect(src.destroys).toBe(1);
  });

  it("arrayBuffer() while the body is still arriving: 'end' and 'close' follow the producer's end", async () => {
    const { body } = makeBody();
    const events = lifecycle(body);
    body.push(Buffer.from('ab'));
    const p = body.arrayBuffer();
    body.push(Buffer.from('cd'));
    expect(events).toEqual([]);
    body.push(null);
    expect(Buffer.from(await p).toString()).toBe('abcd');
    await once(body, 'close');
    expect(events).toEqual(['end', 'close']);
  });

  it("a 'data' listener gets the held chunks in order, then 'end' and 'close'", async () => {
    const { body } = makeBody();
    body.push(Buffer.from('one,'));
    body.push(Buffer.from('two'));
    body.push(null);
    const events = lifecycle(body);
    const seen: string[] = [];
    body.on('data', (c: Buffer) => seen.push(c.toString()));
    await once(body, 'close');
    expect(seen).toEqual(['one,', 'two']);
    expect(events).toEqual(['end', 'close']);
    expect(body.bodyUsed).toBe(true);
  });

  it('once() on data, and prependListener then resume(), get the held chunks', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('x'));
    const [first] = await once(body, 'data');
    expect((first as Buffer).toString()).toBe('x');
    const late = makeBody().body;
    late.push(Buffer.from('y'));
    // As on any Readable, prependListener does not start the flow by itself.
    const got = new Promise<Buffer>((resolve) => late.prependOnceListener('data', resolve));
    late.resume();
    expect((await got).toString()).toBe('y');
  });

  it('async iteration yields held chunks, then the ones that arrive later', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    const later = (async () => {
      await new Promise((r) => setImmediate(r));
      body.push(Buffer.from('c'));
      body.push(null);
    })();
    const parts: string[] = [];
    for await (const chunk of body) parts.push((chunk as Buffer).toString());
    await later;
    expect(parts.join('')).toBe('abc');
    expect(body.bodyUsed).toBe(true);
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('pipe() and stream.pipeline() deliver every held byte', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('piped '));
    body.push(Buffer.from('bytes'));
    body.push(null);
    const out = new PassThrough();
    body.pipe(out);
    expect(Buffer.concat(await out.toArray()).toString()).toBe('piped bytes');

    const second = makeBody().body;
    second.push(Buffer.from('through pipeline'));
    second.push(null);
    const got: Buffer[] = [];
    await pipeline(
      second,
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          got.push(chunk);
          cb();
        },
      }),
    );
    expect(Buffer.concat(got).toString()).toBe('through pipeline');
  });

  it('read() hands out the held bytes; reading below highWaterMark resumes the producer', async () => {
    const { body, src } = makeBody({ highWaterMark: 4 });
    body.push(Buffer.from('abc'));
    body.push(Buffer.from('de'));
    expect((body.read() as Buffer).toString()).toBe('abcde');
    await new Promise((r) => setImmediate(r));
    expect(src.resumes).toBeGreaterThan(0);
  });

  it('setEncoding decodes a character split across held chunks', async () => {
    const bytes = Buffer.from('h\u00e9!', 'utf8');
    const { body } = makeBody();
    body.push(bytes.subarray(0, 2));
    body.push(bytes.subarray(2));
    body.push(null);
    body.setEncoding('utf8');
    const parts: string[] = [];
    for await (const s of body) parts.push(s as string);
    expect(parts.join('')).toBe('h\u00e9!');
  });

  it('the web stream view reads the held bytes', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('web '));
    body.push(Buffer.from('view'));
    body.push(null);
    const text = await new Response(body.body as unknown as globalThis.ReadableStream).text();
    expect(text).toBe('web view');
  });

  it('dump() of a complete held body resolves with the stream ended, without aborting', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('discard me'));
    body.push(null);
    expect(await body.dump()).toBeUndefined();
    expect(body.readableEnded).toBe(true);
    expect(src.aborts).toEqual([]);
  });

  it('destroying a held body drops its bytes; a consumer afterwards rejects with the error', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('partial'));
    const boom = new Error('gone');
    body.on('error', () => {});
    body.destroy(boom);
    expect(src.aborts).toEqual([boom]);
    await expect(body.arrayBuffer()).rejects.toBe(boom);
  });
});

describe('a body read through the stream API first', () => {
  it('text() after partial reading through data rejects with TypeError', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('first'));
    const [chunk] = await once(body, 'data');
    expect((chunk as Buffer).toString()).toBe('first');
    body.pause();
    body.push(Buffer.from('second'));
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('text() beside a data listener: both see every byte', async () => {
    const { body } = makeBody();
    const seen: Buffer[] = [];
    body.push(Buffer.from('he'));
    body.on('data', (c: Buffer) => seen.push(c));
    const p = body.text();
    body.push(Buffer.from('llo'));
    body.push(null);
    expect(await p).toBe('hello');
    expect(Buffer.concat(seen).toString()).toBe('hello');
  });

  it('a paused body holds the producer back; resume() lets it flow again', async () => {
    const { body, src } = makeBody({ highWaterMark: 4 });
    const seen: Buffer[] = [];
    body.on('data', (c: Buffer) => seen.push(c));
    body.pause();
    expect(body.push(Buffer.from('abcd'))).toBe(false);
    expect(body.isPaused()).toBe(true);
    const before = src.resumes;
    body.resume();
    await once(body, 'data');
    await new Promise((r) => setImmediate(r));
    expect(src.resumes).toBeGreaterThan(before);
    body.push(null);
    await once(body, 'end');
    expect(Buffer.concat(seen).toString()).toBe('abcd');
  });

  it("an 'end' listener alone does not read the body (as on any Readable)", async () => {
    const { body } = makeBody();
    let ended = false;
    body.on('end', () => (ended = true));
    body.push(Buffer.from('x'));
    body.push(null);
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    expect(await body.text()).toBe('x');
    await once(body, 'close');
    expect(ended).toBe(true);
  });

  it('text() on a body destroyed mid-way after some reading rejects with the error', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('a'));
    const p = body.text();
    body.push(Buffer.from('b'));
    body.destroy(new RequestAbortedError('cut'));
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
  });
});

describe('bodies on the engine', () => {
  const cleanup = useCleanup();
  // Destroyed, not closed, after each test: a failed test may leave a body unread.
  const makeClient = (origin: string, opts?: ConstructorParameters<typeof Client>[1]): Client => {
    const c = new Client(origin, opts);
    cleanup.push(() => c.destroy());
    return c;
  };

  async function rawOrigin(response: string, hangUp: boolean): Promise<string> {
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        await readUntil(socket, (t) => countRequests(t) >= 1);
        socket.write(response);
        if (hangUp) setImmediate(() => socket.destroy());
      }),
    );
    return srv.origin;
  }

  it('a body cut short of its content-length fails text() and arrayBuffer(); never a short success', async () => {
    const origin = await rawOrigin('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', true);
    const client = makeClient(origin, { pipelining: 1 });
    const first = await client.request({ path: '/', method: 'GET' });
    // A keep-alive response cut short: the peer went away (undici's SocketError).
    await expect(first.body.text()).rejects.toBeInstanceOf(errors.SocketError);
    const second = await client.request({ path: '/', method: 'GET' });
    // Read after the failure has already arrived.
    await once(second.body, 'error');
    await expect(second.body.arrayBuffer()).rejects.toBeInstanceOf(errors.SocketError);
  });

  it('a connection lost mid-body fails the consumer with SocketError', async () => {
    const origin = await rawOrigin('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n', true);
    const client = makeClient(origin);
    const { body } = await client.request({ path: '/', method: 'GET' });
    await expect(body.bytes()).rejects.toBeInstanceOf(errors.SocketError);
  });

  it("text() of a small response: 'end' before 'close', and the connection is reused", async () => {
    let connections = 0;
    const srv = cleanup.track(await httpServer((_req, res) => res.end('small body')));
    srv.server.on('connection', () => connections++);
    const client = makeClient(srv.origin);
    for (let i = 0; i < 3; i++) {
      const { body } = await client.request({ path: '/', method: 'GET' });
      const events = lifecycle(body);
      expect(await body.text()).toBe('small body');
      await once(body, 'close');
      expect(events).toEqual(['end', 'close']);
    }
    expect(connections).toBe(1);
  });

  const TOTAL = 64 * 1024 * 1024; // far beyond socket buffers and the engine's queue bound

  /** A response of TOTAL bytes of `fill`, left unread until the server is blocked on it. */
  async function blockedBody(fill: string): Promise<BodyReadable> {
    const progress = new BodyProgress();
    const srv = cleanup.track(await httpServer(backpressuredBody(TOTAL, fill, progress)));
    const { body } = await makeClient(srv.origin).request({ path: '/', method: 'GET' });
    await serverStaysBlocked(progress);
    expect(progress.written).toBeLessThan(TOTAL);
    return body;
  }

  it('an unread body pauses the server; async iteration then reads it whole', async () => {
    const body = await blockedBody('z');
    let received = 0;
    for await (const chunk of body) received += (chunk as Buffer).length;
    expect(received).toBe(TOTAL);
  });

  it('an unread body pauses the server; arrayBuffer() then reads it whole', async () => {
    const ab = await (await blockedBody('q')).arrayBuffer();
    expect(ab.byteLength).toBe(TOTAL);
    expect(Buffer.from(ab).equals(Buffer.alloc(TOTAL, 'q'))).toBe(true);
  });
});
