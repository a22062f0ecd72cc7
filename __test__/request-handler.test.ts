// request(): argument validation, the promise and callback forms, 1xx, trailers, aborts (signal,
// emitter, body destroy), failures before and after the response, backpressure; plus the error
// classes. Runs against real node:http servers through a swappable dispatcher factory.
import { describe, expect, it, vi } from 'vitest';
import { EventEmitter, getEventListeners, once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { request } from '../ts/api/request.js';
import * as E from '../ts/core/errors.js';
import { Dispatcher } from '../ts/dispatcher/dispatcher.js';
import type { DispatchHandler, DispatchOptions, ResponseData } from '../ts/core/types.js';
import { httpServer } from './fixtures/servers.js';
import { nodeHttpDispatcher, spyDispatcher, type ControllerSpy, type DispatcherFactory } from './fixtures/http-dispatcher.js';
import { useCleanup } from './fixtures/cleanup.js';

// Swap for `(origin) => new Client(origin)` to run the same tests against the engine.
const makeDispatcher: DispatcherFactory = nodeHttpDispatcher;

const { InvalidArgumentError, RequestAbortedError } = E;

const cleanup = useCleanup();

let requestsSeen = 0;
/** Emits each request's path as the server receives it. */
const arrivals = new EventEmitter();

function route(req: IncomingMessage, res: ServerResponse): void {
  requestsSeen++;
  arrivals.emit(req.url ?? '');
  switch (req.url) {
    case '/':
      res.setHeader('x-custom', 'yes');
      res.end('hello');
      return;
    case '/hold':
      // Headers and part of the body, then nothing until the test ends.
      res.write('partial');
      return;
    case '/no-headers':
      return;
    case '/trailers':
      res.writeHead(200, { trailer: 'x-trailer' });
      res.write('body');
      // Late enough that the caller sees the response before the trailers exist.
      setTimeout(() => {
        res.addTrailers({ 'x-trailer': 'present' });
        res.end();
      }, 30);
      return;
    case '/info':
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      setTimeout(() => res.end('done'), 5);
      return;
    case '/reset':
      req.socket.destroy();
      return;
    case '/reset-mid-body':
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 10);
      return;
    case '/big':
      res.end(Buffer.alloc(4 * 1024 * 1024, 'b'));
      return;
    case '/echo': {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`${req.method} ${Buffer.concat(chunks).toString()}`));
      return;
    }
    default:
      res.statusCode = 404;
      res.end();
  }
}

async function setup(): Promise<{ dispatcher: Dispatcher; spy: ControllerSpy }> {
  const running = await httpServer(route);
  const inner = makeDispatcher(running.origin);
  cleanup.push(() => running.close());
  cleanup.push(() => inner.destroy());
  return spyDispatcher(inner);
}

/** A dispatcher whose dispatch() is scripted by the test: no network. */
class ScriptedDispatcher extends Dispatcher {
  constructor(readonly script: (opts: DispatchOptions, handler: DispatchHandler) => boolean) {
    super();
  }
  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    return this.script(opts, handler);
  }
  close(): Promise<void>;
  close(callback: () => void): void;
  close(): Promise<void> | void {
    return Promise.resolve();
  }
  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(): Promise<void> | void {
    return Promise.resolve();
  }
}

function requestCb(dispatcher: Dispatcher, opts: Parameters<Dispatcher['request']>[0]) {
  return new Promise<{ err: Error | null; data: ResponseData<unknown>; sync: boolean }>((resolve) => {
    let returned = false;
    const ret = dispatcher.request(opts, (err, data) => resolve({ err, data, sync: !returned }));
    returned = true;
    expect(ret).toBeUndefined();
  });
}

describe('request(): forms and results', () => {
  it('promise form resolves with the response data', async () => {
    const { dispatcher } = await setup();
    const opaque = { tag: 1 };
    const data = await dispatcher.request({ path: '/', method: 'GET', opaque });
    expect(data.statusCode).toBe(200);
    expect(data.statusText).toBe('OK');
    expect(data.headers['x-custom']).toBe('yes');
    expect(data.opaque).toBe(opaque);
    expect(typeof data.context).toBe('object');
    expect(data.trailers).toEqual({});
    expect(data.body).toBeInstanceOf(Readable);
    expect(await data.body.text()).toBe('hello');
  });

  it('opaque defaults to null', async () => {
    const { dispatcher } = await setup();
    const data = await dispatcher.request({ path: '/', method: 'GET' });
    expect(data.opaque).toBe(null);
    await data.body.dump();
  });

  it('callback form calls back (err, data) asynchronously and returns undefined', async () => {
    const { dispatcher } = await setup();
    const { err, data, sync } = await requestCb(dispatcher, { path: '/', method: 'GET', opaque: 'o' });
    expect(err).toBe(null);
    expect(sync).toBe(false);
    expect(data.statusCode).toBe(200);
    expect(data.opaque).toBe('o');
    expect(await data.body.text()).toBe('hello');
  });

  it('the standalone function works with `this` bound to a dispatcher', async () => {
    const { dispatcher } = await setup();
    const promiseForm = request as (this: Dispatcher, opts: DispatchOptions) => Promise<ResponseData<null>>;
    const data = await promiseForm.call(dispatcher, { path: '/', method: 'GET' });
    expect(await data.body.text()).toBe('hello');
  });

  it('sends a request body', async () => {
    const { dispatcher } = await setup();
    const { body } = await dispatcher.request({ path: '/echo', method: 'POST', body: 'payload' });
    expect(await body.text()).toBe('POST payload');
  });

  it('HEAD gives an empty body that ends', async () => {
    const { dispatcher } = await setup();
    const { statusCode, body } = await dispatcher.request({ path: '/', method: 'HEAD' });
    expect(statusCode).toBe(200);
    expect(await body.text()).toBe('');
  });

  it('many concurrent requests', async () => {
    const { dispatcher } = await setup();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        dispatcher.request({ path: '/', method: 'GET' }).then((r) => r.body.text()),
      ),
    );
    expect(results.every((t) => t === 'hello')).toBe(true);
  });

  it('trailers: the same object, empty until the body ends, then filled in place', async () => {
    const { dispatcher } = await setup();
    const data = await dispatcher.request({ path: '/trailers', method: 'GET' });
    const trailers = data.trailers;
    expect(trailers).toEqual({});
    data.body.resume();
    await once(data.body, 'end');
    expect(data.trailers).toBe(trailers);
    expect(trailers).toEqual({ 'x-trailer': 'present' });
  });

  it('trailers are filled by the time text() resolves', async () => {
    const { dispatcher } = await setup();
    const data = await dispatcher.request({ path: '/trailers', method: 'GET' });
    expect(await data.body.text()).toBe('body');
    expect(data.trailers['x-trailer']).toBe('present');
  });

  it('a __proto__ trailer stays a plain property', async () => {
    let handlerRef: DispatchHandler | null = null;
    const dispatcher = new ScriptedDispatcher((_opts, handler) => {
      handlerRef = handler;
      return true;
    });
    const controller = { aborted: false, paused: false, reason: null, rawHeaders: null, rawTrailers: null, abort() {}, pause() {}, resume() {} };
    const p = dispatcher.request({ path: '/', method: 'GET' });
    handlerRef!.onRequestStart!(controller, {});
    handlerRef!.onResponseStart!(controller, 200, {}, 'OK');
    const data = await p;
    const trailers = JSON.parse('{"__proto__":"x","a":"b"}') as Record<string, string>;
    handlerRef!.onResponseEnd!(controller, trailers);
    expect(Object.getPrototypeOf(data.trailers)).toBe(Object.prototype);
    expect(Object.keys(data.trailers).sort()).toEqual(['__proto__', 'a']);
    await data.body.text();
  });

  it('onInfo receives 1xx responses; the final response still resolves', async () => {
    const { dispatcher } = await setup();
    const infos: { statusCode: number; headers: Record<string, string | string[]> }[] = [];
    const data = await dispatcher.request({ path: '/info', method: 'GET', onInfo: (i) => infos.push(i) });
    expect(data.statusCode).toBe(200);
    expect(await data.body.text()).toBe('done');
    expect(infos).toHaveLength(1);
    expect(infos[0]!.statusCode).toBe(103);
    expect(infos[0]!.headers.link).toBe('</style.css>; rel=preload');
  });

  it('an onInfo that throws fails the request with its error', async () => {
    const { dispatcher } = await setup();
    const boom = new Error('info boom');
    await expect(
      dispatcher.request({
        path: '/info',
        method: 'GET',
        onInfo: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
  });

  it('a callback that throws: the error surfaces as uncaught, the body is torn down', async () => {
    const { dispatcher, spy } = await setup();
    const saved = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    try {
      const boom = new Error('callback boom');
      const caught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
      let body: Readable | null = null;
      dispatcher.request({ path: '/hold', method: 'GET' }, (_err, data) => {
        body = data.body;
        throw boom;
      });
      expect(await caught).toBe(boom);
      if (!body!.destroyed) await once(body!, 'close');
      expect(body!.destroyed).toBe(true);
      expect(spy.aborts).toEqual([boom]);
    } finally {
      for (const l of saved) process.on('uncaughtException', l);
    }
    // The dispatcher keeps working.
    const again = await dispatcher.request({ path: '/', method: 'GET' });
    expect(await again.body.text()).toBe('hello');
  });
});

describe('request(): argument validation', () => {
  const dispatcher = new ScriptedDispatcher(() => {
    throw new Error('should not be dispatched');
  });

  it('rejects non-object opts (promise form)', async () => {
    for (const bad of [null, undefined, 'x', 1]) {
      const p = dispatcher.request(bad as never);
      expect(p).toBeInstanceOf(Promise);
      await expect(p).rejects.toMatchObject({ name: 'InvalidArgumentError', message: 'invalid opts' });
    }
  });

  it('calls back with the error on a later turn (callback form)', async () => {
    const { err, data, sync } = await requestCb(dispatcher, null as never);
    expect(sync).toBe(false);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(data).toEqual({ opaque: undefined });
  });

  it('passes opaque back with a validation error', async () => {
    const { err, data } = await requestCb(dispatcher, { path: '/', method: 'CONNECT', opaque: 7 });
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(data.opaque).toBe(7);
  });

  it('throws synchronously for a callback that is not a function', () => {
    expect(() => dispatcher.request({ path: '/', method: 'GET' }, 'nope' as never)).toThrow(InvalidArgumentError);
  });

  it.each([
    ['CONNECT method', { method: 'CONNECT' }, 'invalid method'],
    ['onInfo not a function', { onInfo: 'x' }, 'invalid onInfo callback'],
    ['signal of the wrong type', { signal: {} }, 'signal must be an EventEmitter or EventTarget'],
    ['negative highWaterMark', { highWaterMark: -1 }, 'invalid highWaterMark'],
    ['non-numeric highWaterMark', { highWaterMark: 'big' }, 'invalid highWaterMark'],
  ])('rejects %s', async (_name, extra, message) => {
    const err = await dispatcher.request({ path: '/', method: 'GET', ...(extra as object) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toBe(message);
    expect((err as E.UndiciError).code).toBe('UND_ERR_INVALID_ARG');
  });

  it('accepts onInfo: null and signal: null', async () => {
    const ok = new ScriptedDispatcher((_o, h) => {
      queueMicrotask(() => h.onResponseError!(null as never, new Error('stop')));
      return true;
    });
    await expect(ok.request({ path: '/', method: 'GET', onInfo: null, signal: null })).rejects.toThrow('stop');
  });

  it('destroys a stream body when validation fails', async () => {
    const body = new Readable({ read() {} });
    await expect(dispatcher.request({ path: '/', method: 'CONNECT', body })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(body.destroyed).toBe(true);
  });

  it('a dispatch() that throws rejects the promise / calls back with the error', async () => {
    const boom = new E.InvalidArgumentError('bad header');
    const throwing = new ScriptedDispatcher(() => {
      throw boom;
    });
    await expect(throwing.request({ path: '/', method: 'GET' })).rejects.toBe(boom);
    const { err, sync } = await requestCb(throwing, { path: '/', method: 'GET' });
    expect(err).toBe(boom);
    expect(sync).toBe(false);
  });

  it('an onResponseError delivered inside dispatch() still calls back asynchronously', async () => {
    const failing = new ScriptedDispatcher((_o, h) => {
      h.onResponseError!(null as never, new E.ClientDestroyedError());
      return false;
    });
    const { err, sync } = await requestCb(failing, { path: '/', method: 'GET' });
    expect(err).toBeInstanceOf(E.ClientDestroyedError);
    expect(sync).toBe(false);
  });
});

describe('request(): aborts', () => {
  it('an already aborted AbortSignal fails the request with RequestAbortedError', async () => {
    const { dispatcher, spy } = await setup();
    const ac = new AbortController();
    ac.abort();
    const err = await dispatcher.request({ path: '/', method: 'GET', signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect((err as Error).name).toBe('AbortError');
    expect(spy.aborts).toHaveLength(1);
  });

  it('a signal reason chosen by the user is passed through', async () => {
    const { dispatcher } = await setup();
    const reason = new Error('my reason');
    await expect(dispatcher.request({ path: '/', method: 'GET', signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('an AbortSignal aborted after dispatch but before the request starts', async () => {
    const { dispatcher, spy } = await setup();
    const ac = new AbortController();
    const p = dispatcher.request({ path: '/', method: 'GET', signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
    expect(spy.aborts.length).toBeGreaterThanOrEqual(1);
  });

  it('an AbortSignal aborted while waiting for headers', async () => {
    const { dispatcher, spy } = await setup();
    const ac = new AbortController();
    const arrived = once(arrivals, '/no-headers');
    const p = dispatcher.request({ path: '/no-headers', method: 'GET', signal: ac.signal });
    await arrived;
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
    expect(spy.aborts[0]).toBeInstanceOf(RequestAbortedError);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('an AbortSignal aborted while the body streams destroys the body', async () => {
    const { dispatcher, spy } = await setup();
    const ac = new AbortController();
    const { body } = await dispatcher.request({ path: '/hold', method: 'GET', signal: ac.signal });
    const text = body.text();
    ac.abort();
    await expect(text).rejects.toBeInstanceOf(RequestAbortedError);
    expect(spy.aborts).toHaveLength(1);
    expect(spy.aborts[0]).toBeInstanceOf(RequestAbortedError);
    expect(body.destroyed).toBe(true);
  });

  it('an EventEmitter signal: abort before the request starts', async () => {
    const { dispatcher } = await setup();
    const ee = new EventEmitter();
    const p = dispatcher.request({ path: '/', method: 'GET', signal: ee });
    ee.emit('abort');
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
    expect(ee.listenerCount('abort')).toBe(0);
  });

  it('an EventEmitter signal: abort while waiting for headers', async () => {
    const { dispatcher, spy } = await setup();
    const ee = new EventEmitter();
    const arrived = once(arrivals, '/no-headers');
    const p = dispatcher.request({ path: '/no-headers', method: 'GET', signal: ee });
    await arrived;
    ee.emit('abort');
    await expect(p).rejects.toBeInstanceOf(RequestAbortedError);
    expect(spy.aborts).toHaveLength(1);
    expect(ee.listenerCount('abort')).toBe(0);
  });

  it('an EventEmitter signal: abort while the body streams', async () => {
    const { dispatcher } = await setup();
    const ee = new EventEmitter();
    const { body } = await dispatcher.request({ path: '/hold', method: 'GET', signal: ee });
    const errored = once(body, 'error');
    ee.emit('abort');
    const [err] = await errored;
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(ee.listenerCount('abort')).toBe(0);
  });

  it('signal listeners are removed once the response is consumed', async () => {
    const { dispatcher } = await setup();
    const ac = new AbortController();
    const ee = new EventEmitter();
    const a = await dispatcher.request({ path: '/', method: 'GET', signal: ac.signal });
    const b = await dispatcher.request({ path: '/', method: 'GET', signal: ee });
    await a.body.text();
    await b.body.text();
    // The listeners go when the bodies close (just after their end).
    await Promise.all([a.body, b.body].map((body) => (body.closed ? null : once(body, 'close'))));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(ee.listenerCount('abort')).toBe(0);
    // Aborting afterwards is harmless.
    ac.abort();
    ee.emit('abort');
  });

  it('signal listeners are removed when the request fails', async () => {
    const { dispatcher } = await setup();
    const ac = new AbortController();
    await expect(dispatcher.request({ path: '/reset', method: 'GET', signal: ac.signal })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('one signal shared by many requests leaves no listeners behind', async () => {
    const { dispatcher } = await setup();
    const ac = new AbortController();
    await Promise.all(
      Array.from({ length: 20 }, () =>
        dispatcher.request({ path: '/', method: 'GET', signal: ac.signal }).then((r) => r.body.text()),
      ),
    );
    // Released when each body is torn down, which follows its 'end'.
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('destroying the body aborts the request with RequestAbortedError', async () => {
    const { dispatcher, spy } = await setup();
    const { body } = await dispatcher.request({ path: '/hold', method: 'GET' });
    const errored = once(body, 'error');
    body.destroy();
    const [err] = await errored;
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(spy.aborts).toHaveLength(1);
    expect(spy.aborts[0]).toBeInstanceOf(RequestAbortedError);
  });

  it('destroying the body with no error listener does not crash', async () => {
    const { dispatcher, spy } = await setup();
    // An 'error' emitted with no listener would surface as an uncaught exception.
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): number => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const { body } = await dispatcher.request({ path: '/hold', method: 'GET' });
      // Not events.once: it would listen for 'error' too.
      const closed = new Promise((r) => body.on('close', r));
      body.destroy();
      await closed;
      expect(spy.aborts).toHaveLength(1);
      expect(spy.aborts[0]).toBeInstanceOf(RequestAbortedError);
      const full = await dispatcher.request({ path: '/', method: 'GET' });
      await once(full.body, 'readable'); // the response's bytes are buffered, unread
      const fullClosed = new Promise((r) => full.body.on('close', r));
      full.body.destroy();
      await fullClosed;
      expect(full.body.destroyed).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('request(): failures and flow control', () => {
  it('a connection reset before the response rejects (promise) / calls back (callback)', async () => {
    const { dispatcher } = await setup();
    // node:http's error for a socket that closes before the response (the dispatcher under test).
    const reset = { constructor: Error, code: 'ECONNRESET', message: 'socket hang up' };
    await expect(dispatcher.request({ path: '/reset', method: 'GET' })).rejects.toMatchObject(reset);
    const { err, data } = await requestCb(dispatcher, { path: '/reset', method: 'GET', opaque: 'x' });
    expect(err).toMatchObject(reset);
    expect(data.opaque).toBe('x');
  });

  it('a failure mid-body errors the body and rejects its consumer', async () => {
    const { dispatcher } = await setup();
    const { body } = await dispatcher.request({ path: '/reset-mid-body', method: 'GET' });
    await expect(body.text()).rejects.toMatchObject({ constructor: E.SocketError, code: 'UND_ERR_SOCKET' });
    expect(body.destroyed).toBe(true);
  });

  it('a failure mid-body errors a streaming reader', async () => {
    const { dispatcher } = await setup();
    const { body } = await dispatcher.request({ path: '/reset-mid-body', method: 'GET' });
    const read = async (): Promise<number> => {
      let n = 0;
      for await (const c of body) n += (c as Buffer).length;
      return n;
    };
    await expect(read()).rejects.toMatchObject({ constructor: E.SocketError, code: 'UND_ERR_SOCKET' });
  });

  it('pauses the producer when the body buffer is full and resumes it as it drains', async () => {
    const { dispatcher, spy } = await setup();
    const { body } = await dispatcher.request({ path: '/big', method: 'GET', highWaterMark: 16 * 1024 });
    // The body fills its 16 KiB buffer with nobody reading: the producer is paused.
    await vi.waitFor(() => expect(spy.pauses).toBeGreaterThan(0));
    let total = 0;
    for await (const chunk of body) total += (chunk as Buffer).length;
    expect(total).toBe(4 * 1024 * 1024);
    expect(spy.resumes).toBeGreaterThan(0);
  });

  it('highWaterMark sets the body buffer size', async () => {
    const { dispatcher } = await setup();
    const { body } = await dispatcher.request({ path: '/', method: 'GET', highWaterMark: 123 });
    expect(body.readableHighWaterMark).toBe(123);
    await body.dump();
  });
});

describe('error classes', () => {
  const table: [new (...args: never[]) => Error, string, string, Function][] = [
    [E.UndiciError, 'UndiciError', 'UND_ERR', Error],
    [E.ConnectTimeoutError, 'ConnectTimeoutError', 'UND_ERR_CONNECT_TIMEOUT', E.UndiciError],
    [E.HeadersTimeoutError, 'HeadersTimeoutError', 'UND_ERR_HEADERS_TIMEOUT', E.UndiciError],
    [E.HeadersOverflowError, 'HeadersOverflowError', 'UND_ERR_HEADERS_OVERFLOW', E.UndiciError],
    [E.BodyTimeoutError, 'BodyTimeoutError', 'UND_ERR_BODY_TIMEOUT', E.UndiciError],
    [E.ResponseError, 'ResponseError', 'UND_ERR_RESPONSE', E.UndiciError],
    [E.InvalidArgumentError, 'InvalidArgumentError', 'UND_ERR_INVALID_ARG', E.UndiciError],
    [E.InvalidReturnValueError, 'InvalidReturnValueError', 'UND_ERR_INVALID_RETURN_VALUE', E.UndiciError],
    [E.AbortError, 'AbortError', 'UND_ERR_ABORT', E.UndiciError],
    [E.RequestAbortedError, 'AbortError', 'UND_ERR_ABORTED', E.AbortError],
    [E.InformationalError, 'InformationalError', 'LIB_ERR_INFO', E.UndiciError],
    [E.RequestContentLengthMismatchError, 'RequestContentLengthMismatchError', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH', E.UndiciError],
    [E.ResponseContentLengthMismatchError, 'ResponseContentLengthMismatchError', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', E.UndiciError],
    [E.ClientDestroyedError, 'ClientDestroyedError', 'UND_ERR_DESTROYED', E.UndiciError],
    [E.ClientClosedError, 'ClientClosedError', 'UND_ERR_CLOSED', E.UndiciError],
    [E.SocketError, 'SocketError', 'UND_ERR_SOCKET', E.UndiciError],
    [E.NotSupportedError, 'NotSupportedError', 'UND_ERR_NOT_SUPPORTED', E.UndiciError],
    [E.BalancedPoolMissingUpstreamError, 'MissingUpstreamError', 'UND_ERR_BPL_MISSING_UPSTREAM', E.UndiciError],
    [E.ResponseExceededMaxSizeError, 'ResponseExceededMaxSizeError', 'UND_ERR_RES_EXCEEDED_MAX_SIZE', E.UndiciError],
    [E.RequestRetryError, 'RequestRetryError', 'UND_ERR_REQ_RETRY', E.UndiciError],
    [E.SecureProxyConnectionError, 'SecureProxyConnectionError', 'UND_ERR_PRX_TLS', E.UndiciError],
    [E.MaxOriginsReachedError, 'MaxOriginsReachedError', 'UND_ERR_MAX_ORIGINS_REACHED', E.UndiciError],
    [E.MockNotMatchedError, 'MockNotMatchedError', 'UND_MOCK_ERR_MOCK_NOT_MATCHED', E.UndiciError],
  ];

  it.each(table)('%o has its name, code and base', (Cls, name, code, Base) => {
    const Ctor = Cls as unknown as new (a?: unknown, b?: unknown, c?: unknown) => Error & { code: string };
    const err = Cls === E.SecureProxyConnectionError ? new Ctor(new Error('tls')) : new Ctor(undefined, 500, {});
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err).toBeInstanceOf(Cls);
    expect(err).toBeInstanceOf(Base);
    expect(err).toBeInstanceOf(Error);
    if (Cls !== E.UndiciError) expect(err.message.length).toBeGreaterThan(0);
    expect(typeof err.stack).toBe('string');
    expect(E.errors[Cls.name as keyof typeof E.errors]).toBe(Cls);
  });

  it('default messages the spec quotes', () => {
    expect(new E.RequestAbortedError().message).toBe('Request aborted');
    expect(new E.ClientDestroyedError().message).toBe('The client is destroyed');
    expect(new E.ClientClosedError().message).toBe('The client is closed');
    expect(new E.InvalidArgumentError('custom').message).toBe('custom');
  });

  it('instanceof follows the hierarchy, not just the brand', () => {
    const aborted = new E.RequestAbortedError();
    expect(aborted).toBeInstanceOf(E.AbortError);
    expect(aborted).toBeInstanceOf(E.UndiciError);
    expect(new E.AbortError()).not.toBeInstanceOf(E.RequestAbortedError);
    expect(new E.InvalidArgumentError()).not.toBeInstanceOf(E.ClientClosedError);
    expect(new Error('plain')).not.toBeInstanceOf(E.UndiciError);
    for (const value of [null, undefined, 'x', 1] as unknown[]) {
      expect((value as object) instanceof E.UndiciError).toBe(false);
    }
  });

  it('instanceof matches errors from another copy of the library (shared Symbol.for brand)', () => {
    // What a second copy's InvalidArgumentError looks like from here: an unrelated class whose
    // prototype carries the same global brands.
    class Foreign extends Error {}
    for (const id of ['UND_ERR', 'UND_ERR_INVALID_ARG']) {
      Object.defineProperty(Foreign.prototype, Symbol.for(`lib.error.${id}`), { value: true });
    }
    const err = new Foreign('from elsewhere');
    expect(err).toBeInstanceOf(E.InvalidArgumentError);
    expect(err).toBeInstanceOf(E.UndiciError);
    expect(err).not.toBeInstanceOf(E.SocketError);
  });

  it('a user subclass gets ordinary instanceof semantics', () => {
    class MyError extends E.InvalidArgumentError {}
    const mine = new MyError('m');
    expect(mine).toBeInstanceOf(MyError);
    expect(mine).toBeInstanceOf(E.InvalidArgumentError);
    expect(new E.InvalidArgumentError()).not.toBeInstanceOf(MyError);
  });

  it('HTTPParserError carries an HPE_ code and data, and is not an UndiciError', () => {
    const a = new E.HTTPParserError('Parse Error', 'INVALID_CONSTANT', Buffer.from('HTTP/1.1 x'));
    expect(a.name).toBe('HTTPParserError');
    expect(a.code).toBe('HPE_INVALID_CONSTANT');
    expect(a.data).toBe('HTTP/1.1 x');
    const b = new E.HTTPParserError('Parse Error', 'HPE_INVALID_CHUNK_SIZE');
    expect(b.code).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(b.data).toBeUndefined();
    expect(a).toBeInstanceOf(E.HTTPParserError);
    expect(a).toBeInstanceOf(Error);
    expect(a).not.toBeInstanceOf(E.UndiciError);
    expect(E.errors.HTTPParserError).toBe(E.HTTPParserError);
  });

  it('ResponseError and RequestRetryError carry the response', () => {
    const r = new E.ResponseError('bad status', 503, { headers: { a: 'b' }, body: { msg: 'x' } });
    expect(r.statusCode).toBe(503);
    expect(r.headers).toEqual({ a: 'b' });
    expect(r.body).toEqual({ msg: 'x' });
    const q = new E.RequestRetryError('retry', 429, { headers: { 'retry-after': '1' }, data: { count: 3 } });
    expect(q.statusCode).toBe(429);
    expect(q.headers).toEqual({ 'retry-after': '1' });
    expect(q.data).toEqual({ count: 3 });
  });

  it('SocketError carries socket details or null', () => {
    const info = {
      localAddress: '127.0.0.1',
      localPort: 5000,
      remoteAddress: '127.0.0.1',
      remotePort: 80,
      remoteFamily: 'IPv4',
      timeout: undefined,
      bytesWritten: 10,
      bytesRead: 20,
    };
    expect(new E.SocketError('closed', info).socket).toEqual(info);
    expect(new E.SocketError('closed').socket).toBe(null);
  });

  it('SecureProxyConnectionError keeps its cause', () => {
    const cause = new Error('tls');
    expect(new E.SecureProxyConnectionError(cause).cause).toBe(cause);
  });

  it('errors lists every class', () => {
    for (const [Cls] of table) expect(Object.values(E.errors)).toContain(Cls);
  });
});
