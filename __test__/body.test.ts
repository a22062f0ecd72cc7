// BodyReadable: the body mixin, dump(), and how the body talks back to its producer
// (resume on read, abort on early destroy). First against a hand-driven producer, then end to end
// through request() on a real server.
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { InvalidArgumentError, RequestAbortedError } from '../ts/core/errors.js';
import type { Dispatcher } from '../ts/dispatcher/dispatcher.js';
import { httpServer } from './fixtures/servers.js';
import { nodeHttpDispatcher, type DispatcherFactory } from './fixtures/http-dispatcher.js';
import { makeBody } from './fixtures/body-source.js';

// Swap for `(origin) => new Client(origin)` to run the end-to-end part against the engine.
const makeDispatcher: DispatcherFactory = nodeHttpDispatcher;

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('BodyReadable mixin', () => {
  it('text() joins chunks pushed before and after the call, in order', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('he'));
    body.push(Buffer.from('llo'));
    const p = body.text();
    body.push(Buffer.from(' wor'));
    body.push(Buffer.from('ld'));
    body.push(null);
    expect(await p).toBe('hello world');
  });

  it('text() decodes a multi-byte character split across chunks and drops a BOM', async () => {
    const bytes = Buffer.from('\ufeffh\u00e9llo \u{1f600}', 'utf8');
    const { body } = makeBody();
    const p = body.text();
    for (const b of bytes) body.push(Buffer.from([b]));
    body.push(null);
    expect(await p).toBe('h\u00e9llo \u{1f600}');
  });

  it('text() of a single chunk and of an empty body', async () => {
    const a = makeBody().body;
    a.push(Buffer.from('one'));
    a.push(null);
    expect(await a.text()).toBe('one');
    const b = makeBody().body;
    b.push(null);
    expect(await b.text()).toBe('');
  });

  it('json() parses the body', async () => {
    const { body } = makeBody();
    const p = body.json();
    body.push(Buffer.from('{"a":[1,'));
    body.push(Buffer.from('2],"b":"x"}'));
    body.push(null);
    expect(await p).toEqual({ a: [1, 2], b: 'x' });
  });

  it('json() on an empty body rejects', async () => {
    const { body } = makeBody();
    body.push(null);
    await expect(body.json()).rejects.toBeInstanceOf(SyntaxError);
  });

  it('json() on invalid JSON rejects and the stream still ends cleanly', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('{nope'));
    body.push(null);
    await expect(body.json()).rejects.toBeInstanceOf(SyntaxError);
    await once(body, 'close');
    expect(src.aborts).toEqual([]);
  });

  it('bytes() returns a fresh Uint8Array copy', async () => {
    const { body } = makeBody();
    const chunk = Buffer.from([1, 2, 3]);
    body.push(chunk);
    body.push(null);
    const bytes = await body.bytes();
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(bytes)).toBe(false);
    expect([...bytes]).toEqual([1, 2, 3]);
    chunk[0] = 9;
    expect(bytes[0]).toBe(1);
  });

  it('bytes() of several chunks and of nothing', async () => {
    const a = makeBody().body;
    const p = a.bytes();
    a.push(Buffer.from([1, 2]));
    a.push(Buffer.from([3]));
    a.push(null);
    expect([...(await p)]).toEqual([1, 2, 3]);
    const b = makeBody().body;
    b.push(null);
    expect((await b.bytes()).byteLength).toBe(0);
  });

  it('arrayBuffer() has exactly the body length even when the chunk is a view', async () => {
    const { body } = makeBody();
    const big = Buffer.from('xxhelloxx');
    body.push(big.subarray(2, 7));
    body.push(null);
    const ab = await body.arrayBuffer();
    expect(ab).toBeInstanceOf(ArrayBuffer);
    expect(ab.byteLength).toBe(5);
    expect(Buffer.from(ab).toString()).toBe('hello');
  });

  it('blob() carries the content type', async () => {
    const { body } = makeBody({ contentType: 'text/plain; charset=utf-8' });
    body.push(Buffer.from('blob'));
    body.push(Buffer.from('by'));
    body.push(null);
    const blob = await body.blob();
    expect(blob.type).toBe('text/plain; charset=utf-8');
    expect(blob.size).toBe(6);
    expect(await blob.text()).toBe('blobby');
  });

  it('formData() is not supported', async () => {
    const { body } = makeBody();
    await expect(body.formData()).rejects.toMatchObject({ code: 'UND_ERR_NOT_SUPPORTED' });
  });

  it('a second consumption rejects with TypeError', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('x'));
    body.push(null);
    expect(await body.text()).toBe('x');
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
    await expect(body.json()).rejects.toBeInstanceOf(TypeError);
    await expect(body.arrayBuffer()).rejects.toBeInstanceOf(TypeError);
  });

  it('two consumers started in the same tick: the second rejects with TypeError', async () => {
    const { body } = makeBody();
    const first = body.text();
    const second = body.json();
    body.push(Buffer.from('"v"'));
    body.push(null);
    expect(await first).toBe('"v"');
    await expect(second).rejects.toBeInstanceOf(TypeError);
  });

  it('consuming after the stream was read rejects with TypeError', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('abc'));
    body.push(null);
    const got: Buffer[] = [];
    for await (const chunk of body) got.push(chunk as Buffer);
    expect(Buffer.concat(got).toString()).toBe('abc');
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('bodyUsed flips once a consumer starts', async () => {
    const { body } = makeBody();
    expect(body.bodyUsed).toBe(false);
    const p = body.text();
    expect(body.bodyUsed).toBe(true);
    body.push(null);
    await p;
    expect(body.bodyUsed).toBe(true);
  });

  it('bodyUsed is true after data was read through the Readable API', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('a'));
    body.read();
    expect(body.bodyUsed).toBe(true);
  });

  it('body is a web ReadableStream view of the bytes, created once', async () => {
    const { body } = makeBody();
    const web = body.body;
    expect(web).toBe(body.body);
    expect(web).toBeInstanceOf(ReadableStream);
    body.push(Buffer.from('web '));
    body.push(Buffer.from('stream'));
    body.push(null);
    const text = await new Response(web as unknown as globalThis.ReadableStream).text();
    expect(text).toBe('web stream');
    expect(body.bodyUsed).toBe(true);
  });

  it('body is locked after a mixin consumer took the bytes', async () => {
    const { body } = makeBody();
    body.push(null);
    await body.text();
    expect(body.body.locked).toBe(true);
  });

  it('a mixin consumer after the web stream was locked rejects with TypeError', async () => {
    const { body } = makeBody();
    body.body.getReader();
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('cancelling the web stream destroys the body and aborts the producer', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('x'));
    const reader = body.body.getReader();
    await reader.read();
    await reader.cancel();
    await tick();
    expect(body.destroyed).toBe(true);
    expect(src.aborts).toHaveLength(1);
  });
});

describe('BodyReadable as a Readable', () => {
  it('an empty body is still a Readable that ends', async () => {
    const { body } = makeBody();
    body.push(null);
    expect(body).toBeInstanceOf(Readable);
    body.resume();
    await once(body, 'end');
  });

  it('setEncoding works as on any Readable', async () => {
    const { body } = makeBody();
    body.setEncoding('utf8');
    const euro = Buffer.from('\u20ac');
    body.push(euro.subarray(0, 1));
    body.push(euro.subarray(1));
    body.push(null);
    const parts: unknown[] = [];
    body.on('data', (c) => parts.push(c));
    await once(body, 'end');
    expect(parts.join('')).toBe('\u20ac');
    expect(parts.every((p) => typeof p === 'string')).toBe(true);
  });

  it('text() honours chunks buffered after setEncoding', async () => {
    const { body } = makeBody();
    body.setEncoding('utf8');
    body.push(Buffer.from('caf\u00e9 '));
    const p = body.text();
    body.push(Buffer.from('ok'));
    body.push(null);
    expect(await p).toBe('caf\u00e9 ok');
  });

  it('push() reports backpressure past highWaterMark and reading calls resume()', async () => {
    const { body, src } = makeBody({ highWaterMark: 4 });
    expect(body.push(Buffer.from('ab'))).toBe(true);
    expect(body.push(Buffer.from('cdef'))).toBe(false);
    const before = src.resumes;
    body.read();
    await tick();
    expect(src.resumes).toBeGreaterThan(before);
  });

  it('a mixin consumer never asks the producer to pause', async () => {
    const { body } = makeBody({ highWaterMark: 1 });
    const p = body.text();
    for (let i = 0; i < 100; i++) expect(body.push(Buffer.from('xx'))).toBe(true);
    body.push(null);
    expect((await p).length).toBe(200);
  });

  it('destroy() before the end aborts the producer with RequestAbortedError', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('partial'));
    const errored = once(body, 'error');
    body.destroy();
    const [err] = await errored;
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(src.aborts).toHaveLength(1);
    expect(src.aborts[0]).toBeInstanceOf(RequestAbortedError);
    expect(src.destroys).toBe(1);
  });

  it('destroy(err) passes the error to the producer and the stream', async () => {
    const { body, src } = makeBody();
    const boom = new Error('boom');
    const errored = once(body, 'error');
    body.destroy(boom);
    expect((await errored)[0]).toBe(boom);
    expect(src.aborts).toEqual([boom]);
  });

  it('a normal end neither aborts nor errors, and tears down once', async () => {
    const { body, src } = makeBody();
    body.push(Buffer.from('x'));
    body.push(null);
    body.resume();
    await once(body, 'close');
    expect(src.aborts).toEqual([]);
    expect(src.destroys).toBe(1);
    expect(body.errored).toBe(null);
  });

  it('a consumer in progress rejects when the body is destroyed', async () => {
    const { body, src } = makeBody();
    const p = body.text();
    body.push(Buffer.from('part'));
    const boom = new Error('network gone');
    body.destroy(boom);
    await expect(p).rejects.toBe(boom);
    expect(src.aborts).toEqual([boom]);
  });

  it('a consumer in progress rejects with RequestAbortedError on a plain destroy()', async () => {
    const { body } = makeBody();
    const p = body.arrayBuffer();
    body.destroy();
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
  });

  it('consuming a destroyed body rejects with its error', async () => {
    const { body } = makeBody();
    const boom = new Error('boom');
    body.on('error', () => {});
    body.destroy(boom);
    await expect(body.text()).rejects.toBe(boom);
    await once(body, 'close').catch(() => {});
    await expect(body.text()).rejects.toBe(boom);
  });

  it('destroy() without a listener does not crash when a listener is added a tick later', async () => {
    const { body } = makeBody();
    body.destroy();
    await Promise.resolve();
    const [err] = await once(body, 'error');
    expect(err).toBeInstanceOf(RequestAbortedError);
  });
});

describe('BodyReadable.dump()', () => {
  it('reads a body within the limit without aborting, and resolves undefined', async () => {
    const { body, src } = makeBody();
    const p = body.dump({ limit: 10 });
    body.push(Buffer.from('12345'));
    body.push(Buffer.from('6789'));
    body.push(null);
    expect(await p).toBeUndefined();
    expect(src.aborts).toEqual([]);
    expect(body.readableEnded).toBe(true);
  });

  it('default limit is 128 KiB', async () => {
    const { body, src } = makeBody();
    const p = body.dump();
    body.push(Buffer.alloc(128 * 1024 - 1));
    await tick();
    expect(src.aborts).toEqual([]);
    body.push(Buffer.alloc(10));
    expect(await p).toBeUndefined();
    expect(body.destroyed).toBe(true);
    expect(src.aborts).toHaveLength(1);
  });

  it('destroys the body (aborting the producer) when more than the limit arrives, and still resolves', async () => {
    const { body, src } = makeBody();
    const p = body.dump({ limit: 4 });
    body.push(Buffer.from('123'));
    await tick();
    body.push(Buffer.from('456'));
    expect(await p).toBeUndefined();
    expect(body.destroyed).toBe(true);
    expect(src.aborts).toHaveLength(1);
    expect(src.aborts[0]).toBeInstanceOf(RequestAbortedError);
  });

  it('destroys right away when content-length announces more than the limit', async () => {
    const { body, src } = makeBody({ contentLength: 1000 });
    expect(await body.dump({ limit: 10 })).toBeUndefined();
    expect(body.destroyed).toBe(true);
    expect(src.aborts).toHaveLength(1);
  });

  it('resolves at once on a closed body', async () => {
    const { body } = makeBody();
    body.push(null);
    body.resume();
    await once(body, 'close');
    expect(await body.dump()).toBeUndefined();
  });

  it('rejects with the reason of an already aborted signal', async () => {
    const { body } = makeBody();
    const reason = new Error('stop');
    await expect(body.dump({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('rejects with the signal reason when aborted during the dump', async () => {
    const { body, src } = makeBody();
    const ac = new AbortController();
    const p = body.dump({ signal: ac.signal });
    body.push(Buffer.from('x'));
    await tick();
    const reason = new Error('user abort');
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(src.aborts).toEqual([reason]);
  });

  it('alongside a reader that has a data listener: the reader still gets the bytes', async () => {
    const { body, src } = makeBody();
    const seen: Buffer[] = [];
    body.on('data', (c: Buffer) => seen.push(c));
    const p = body.dump({ limit: 100 });
    body.push(Buffer.from('abc'));
    body.push(null);
    expect(await p).toBeUndefined();
    expect(Buffer.concat(seen).toString()).toBe('abc');
    expect(src.aborts).toEqual([]);
  });

  it('after a mixin consumer: resolves once the body closes', async () => {
    const { body } = makeBody();
    const text = body.text();
    const p = body.dump();
    body.push(Buffer.from('t'));
    body.push(null);
    expect(await text).toBe('t');
    expect(await p).toBeUndefined();
    expect(body.closed).toBe(true);
  });

  it('on a body destroyed but not yet closed: resolves on close', async () => {
    const { body } = makeBody();
    body.on('error', () => {});
    body.destroy(new Error('x'));
    expect(await body.dump()).toBeUndefined();
  });

  it('a text() after dump() rejects with TypeError', async () => {
    const { body } = makeBody();
    body.push(Buffer.from('x'));
    body.push(null);
    await body.dump();
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('data pushed after dump() started is discarded without pausing the producer', async () => {
    const { body, src } = makeBody({ highWaterMark: 2 });
    const p = body.dump({ limit: 1000 });
    for (let i = 0; i < 10; i++) expect(body.push(Buffer.from('xxxx'))).toBe(true);
    body.push(null);
    expect(await p).toBeUndefined();
    expect(src.aborts).toEqual([]);
  });

  it('rejects a signal that is not an AbortSignal', async () => {
    const { body } = makeBody();
    await expect(body.dump({ signal: {} as AbortSignal })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('body mixin through request()', () => {
  let dispatcher: Dispatcher;
  let close: () => Promise<void>;
  const payload = { hello: 'world', n: [1, 2, 3] };

  afterEach(async () => {
    await dispatcher?.close();
    await close?.();
  });

  async function setup(): Promise<void> {
    const running = await httpServer((req, res) => {
      if (req.url === '/json') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(payload));
      } else if (req.url === '/empty') {
        res.statusCode = 204;
        res.end();
      } else if (req.url === '/big') {
        res.end(Buffer.alloc(1024 * 1024, 'a'));
      } else if (req.url === '/chunks') {
        res.write('one,');
        setTimeout(() => res.end('two'), 10);
      } else {
        res.end('plain text');
      }
    });
    close = running.close;
    dispatcher = makeDispatcher(running.origin);
  }

  it('every mixin method', async () => {
    await setup();
    const text = await dispatcher.request({ path: '/', method: 'GET' });
    expect(await text.body.text()).toBe('plain text');

    const json = await dispatcher.request({ path: '/json', method: 'GET' });
    expect(await json.body.json()).toEqual(payload);

    const bytes = await dispatcher.request({ path: '/chunks', method: 'GET' });
    expect(Buffer.from(await bytes.body.bytes()).toString()).toBe('one,two');

    const ab = await dispatcher.request({ path: '/json', method: 'GET' });
    expect(JSON.parse(Buffer.from(await ab.body.arrayBuffer()).toString())).toEqual(payload);

    const blob = await dispatcher.request({ path: '/json', method: 'GET' });
    const b = await blob.body.blob();
    expect(b.type).toBe('application/json');
    expect(JSON.parse(await b.text())).toEqual(payload);

    const web = await dispatcher.request({ path: '/chunks', method: 'GET' });
    expect(await new Response(web.body.body as unknown as globalThis.ReadableStream).text()).toBe('one,two');
  });

  it('a 204 body is an empty Readable; json() on it rejects', async () => {
    await setup();
    const { statusCode, body } = await dispatcher.request({ path: '/empty', method: 'GET' });
    expect(statusCode).toBe(204);
    expect(body).toBeInstanceOf(Readable);
    await expect(body.json()).rejects.toThrow(SyntaxError);
  });

  it('a second consumption of a response body rejects with TypeError', async () => {
    await setup();
    const { body } = await dispatcher.request({ path: '/json', method: 'GET' });
    await body.json();
    await expect(body.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('a large body arrives intact through text()', async () => {
    await setup();
    const { body } = await dispatcher.request({ path: '/big', method: 'GET' });
    // The producer hits backpressure (a full buffer) before the consumer starts.
    await vi.waitFor(() => expect(body.readableLength).toBeGreaterThanOrEqual(body.readableHighWaterMark));
    const text = await body.text();
    expect(text.length).toBe(1024 * 1024);
  });

  it('dump() discards a small body, resolves undefined (Promise<void> as undici types it), and the dispatcher stays usable', async () => {
    await setup();
    const first = await dispatcher.request({ path: '/chunks', method: 'GET' });
    const dumped = first.body.dump();
    expectTypeOf(dumped).toEqualTypeOf<Promise<void>>();
    expect(await dumped).toBeUndefined();
    const second = await dispatcher.request({ path: '/', method: 'GET' });
    expect(await second.body.text()).toBe('plain text');
  });

  it('dump() with a limit below the body size destroys it and resolves', async () => {
    await setup();
    const { body } = await dispatcher.request({ path: '/big', method: 'GET' });
    expect(await body.dump({ limit: 1024 })).toBeUndefined();
    expect(body.destroyed).toBe(true);
  });
});
