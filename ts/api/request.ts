// request(): the promise / callback API on top of dispatch().
//
// This is the benchmark's hot path, so one RequestHandler object carries all per-request state
// and plays every role that would otherwise need a closure: it is the dispatch handler, the
// BodyReadable's source (resume / abort / onDestroy) and the AbortSignal listener (handleEvent).
//
// A body nobody reads must not hold its connection forever. While the request is paused because
// its body is full, the handler (which the dispatcher keeps alive) holds the body only weakly,
// so the user's references are all that keep it; once it is collected unread, the request is
// resumed and the rest of the response discarded (or the request aborted past a limit), and the
// connection goes back to its pool. A body someone still references is untouched.

import { AsyncResource } from 'node:async_hooks';
import { InvalidArgumentError, RequestAbortedError } from '../core/errors.js';
import type {
  DispatchController,
  DispatchHandler,
  DispatchOptions,
  IncomingHeaders,
  RequestOptions,
  ResponseData,
} from '../core/types.js';
import { chunkIsExclusive, kSoleReader, unconsumedBodyTimeoutOf } from '../handler/controller.js';
import { libDebug } from '../core/debug.js';
import { promiseInto } from '../core/promise-into.js';
import { BodyReadable, type BodyReadableOptions } from './body.js';
import { ApiHandler, checkApiOptions, destroyRequestBody } from './api-handler.js';
import { responseHeaders } from './response-head.js';
import { unwatchUnconsumed, watchUnconsumed, type UnconsumedLane, type UnconsumedWatcher } from './unconsumed-bodies.js';

// Declared through a method so its parameters are checked bivariantly: a callback typed for a
// specific opaque type stays assignable where the dispatcher forwards it generically.
export type RequestCallback<TOpaque = null> = {
  callback(err: Error | null, data: ResponseData<TOpaque>): void;
}['callback'];

/** The part of a dispatcher request() needs; any Dispatcher qualifies. */
export interface RequestDispatcher {
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean;
}

type AnyResponseData = ResponseData<unknown>;
type AnyCallback = (err: Error | null, data: AnyResponseData) => void;

function noop(): void {}

/**
 * Paused bodies the handler holds only weakly (see RequestHandler.loosen): one that is collected
 * unread releases its request.
 */
const unreadBodies = new FinalizationRegistry<RequestHandler>((handler) => handler.releaseUnread());

/**
 * How much of the rest of a body let go unread (collected, or past unconsumedBodyTimeout) is read
 * and discarded to keep its connection; a longer rest aborts the request, closing the connection.
 */
const UNREAD_DISCARD_LIMIT = 64 * 1024;

/** Throws InvalidArgumentError for what request() refuses, destroying a stream body the caller gave. */
function checkRequestOptions(opts: RequestOptions<unknown>): void {
  try {
    const highWaterMark = opts.highWaterMark;
    if (
      highWaterMark != null &&
      (typeof highWaterMark !== 'number' || !Number.isFinite(highWaterMark) || highWaterMark < 0)
    ) {
      throw new InvalidArgumentError('invalid highWaterMark');
    }
    checkApiOptions(opts);
  } catch (err) {
    destroyRequestBody(opts.body, err as Error);
    throw err;
  }
}

/**
 * Number(value) for a content-length value. Plain digits (nearly always) are added up here:
 * Number() of a string just sliced from the response takes V8's slow path, which hashes it first.
 */
function lengthValue(value: string): number {
  const n = value.length;
  if (n === 0 || n > 15) return Number(value);
  let v = 0;
  for (let i = 0; i < n; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number(value);
    v = v * 10 + d;
  }
  return v;
}

class RequestHandler extends ApiHandler implements DispatchHandler, BodyReadableOptions, UnconsumedWatcher {
  readonly method: string;
  /** For the NODE_DEBUG line of a body let go unread. */
  readonly path: string;
  readonly highWaterMark: number | undefined;
  /**
   * Handed out empty with the response; filled in place when the body ends. Made with the
   * response, so a queued request does not carry it.
   */
  trailers: Record<string, string> | null = null;

  // Exactly one of callback / resolve is set until the response (or an error) is delivered.
  callback: AnyCallback | null;
  resolve: ((data: AnyResponseData) => void) | null = null;
  reject: ((err: Error) => void) | null = null;
  asyncResource: AsyncResource;

  /** The response body; null while it is held only weakly (paused, see loosen()). */
  body: BodyReadable | null = null;
  /**
   * null until the body first pauses; then the body, held weakly and registered in unreadBodies
   * until the request settles; once it is collected unread, the bytes discarded since. (One field
   * for the three states: every request in flight carries it.)
   */
  unread: WeakRef<BodyReadable> | number | null = null;

  // UnconsumedWatcher: unconsumed-bodies.ts links the watched requests through these.
  unconsumedLane: UnconsumedLane | null = null;
  unconsumedPrev: UnconsumedWatcher | null = null;
  unconsumedNext: UnconsumedWatcher | null = null;
  unconsumedDue = 0;

  constructor(opts: RequestOptions<unknown>, callback: AnyCallback | null) {
    checkRequestOptions(opts);
    super(opts);
    this.method = opts.method;
    this.path = opts.path;
    this.highWaterMark = opts.highWaterMark ?? undefined;
    this.callback = callback;
    // Callbacks and body events run from the engine's event loop turn; keep the caller's async
    // context for them (AsyncLocalStorage-based tracing). The promise gets it from await.
    this.asyncResource = new AsyncResource('LIB_REQUEST');
  }

  // --- DispatchHandler ---

  onResponseStart(
    controller: DispatchController,
    statusCode: number,
    headers: IncomingHeaders,
    statusMessage?: string,
  ): void {
    // `trailers` is set with the final response: a second one is ignored.
    if (this.done || this.trailers !== null) return;

    if (this.informational(controller, statusCode, headers)) return;

    const contentType = headers['content-type'];
    const contentLength = headers['content-length'];
    const body = new BodyReadable(
      this,
      typeof contentType === 'string' ? contentType : undefined,
      this.method !== 'HEAD' && typeof contentLength === 'string' ? lengthValue(contentLength) : null,
    );
    this.body = body;
    const unconsumedMs = unconsumedBodyTimeoutOf(controller);
    if (unconsumedMs > 0) watchUnconsumed(this, unconsumedMs);

    const data: AnyResponseData = {
      statusCode,
      statusText: statusMessage ?? '',
      headers: responseHeaders(this.responseHeaders, controller, headers),
      body,
      trailers: (this.trailers = {}),
      opaque: this.opaque,
      context: this.context as object,
      timings: controller.timings,
    };

    const resolve = this.resolve;
    if (resolve !== null) {
      this.resolve = this.reject = null;
      resolve(data);
      return;
    }

    const callback = this.callback;
    if (callback !== null) {
      this.callback = null;
      try {
        this.asyncResource.runInAsyncScope(callback, null, null, data);
      } catch (err) {
        // The user's callback threw: tear the request down, then surface the error as an
        // uncaught exception instead of letting it unwind into the dispatcher.
        body.on('error', noop);
        body.destroy(err as Error);
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.done) return;
    const body = this.body ?? this.looseBody();
    if (body !== null) {
      // A flowing body emits 'data' inside push: in the caller's context, not the engine's.
      const exclusive = chunkIsExclusive(controller);
      // A body that only holds what it is given runs nothing that needs the caller's context.
      const more = body.holding ? body.pushChunk(chunk, exclusive) : this.asyncResource.runInAsyncScope(body.pushChunk, body, chunk, exclusive);
      if (!more) this.loosen(controller, body);
    } else if (typeof this.unread === 'number') {
      this.unread += chunk.length;
      if (this.unread > UNREAD_DISCARD_LIMIT) {
        controller.abort(new RequestAbortedError('response body was garbage-collected unread'));
      }
    }
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.done) return;
    this.done = true;
    if (trailers != null && this.trailers !== null) {
      const target = this.trailers as Record<string, string | string[]>;
      for (const key in trailers) {
        const value = trailers[key]!;
        // A '__proto__' trailer must become a plain property, not replace the prototype.
        if (key === '__proto__') {
          Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
        } else {
          target[key] = value;
        }
      }
    }
    const body = this.body ?? this.looseBody();
    this.settleUnread();
    unwatchUnconsumed(this);
    if (body !== null) {
      if (body.holding) body.push(null);
      else this.asyncResource.runInAsyncScope(body.push, body, null);
    } else if (this.resolve !== null || this.callback !== null) {
      // A dispatcher that ends without ever starting a final response; don't hang the caller.
      this.deliverError(new RequestAbortedError('response ended before its headers were received'));
    }
  }

  onResponseError(_controller: DispatchController | null, err: Error): void {
    this.fail(err);
  }

  // --- BodyReadableOptions: the body's view of this request ---

  resume(): void {
    // The body asks for more, so it is alive: hold it strongly again while it flows.
    if (this.body === null && this.unread instanceof WeakRef) this.body = this.unread.deref() ?? null;
    // Not skipped after the end: a response delivered whole while paused still leaves the
    // controller paused, and only the controller knows whether that matters.
    const controller = this.controller;
    if (controller !== null) controller.resume();
  }

  /** The body was destroyed (by the user, a signal, or an error) before it ended. */
  abort(err: Error): void {
    // However the destroy came about, the request owns the outcome; an 'error' event on a body
    // nobody listens to must not crash the process.
    (this.body ?? this.looseBody())?.on('error', noop);
    // Done, or let go unread and discarding the rest (its body is destroyed after the fact).
    if (this.done || typeof this.unread === 'number') return;
    const controller = this.controller;
    if (controller !== null) controller.abort(err);
  }

  onDestroy(): void {
    this.removeSignal();
  }

  // --- AbortSignal listener (ApiHandler.handleEvent) ---

  protected onAbortSignal(reason: Error): void {
    const body = this.body ?? this.looseBody();
    if (body !== null) {
      // The response is out: aborting means destroying its body, which aborts the request
      // through abort() above if it is still in flight.
      if (!body.destroyed) {
        body.on('error', noop);
        body.destroy(reason);
      }
      return;
    }
    this.abortRequest(reason);
  }

  // --- bodies nobody reads ---

  /**
   * The producer is paused until the body is read. Until then only the user's references keep
   * the body alive: the dispatcher keeps this handler, so a strong reference here would keep a
   * body no one can read, and its connection, forever.
   */
  loosen(controller: DispatchController, body: BodyReadable): void {
    controller.pause();
    if (this.unread === null) {
      this.unread = new WeakRef(body);
      unreadBodies.register(body, this, this);
    }
    this.body = null;
  }

  /** The weakly held body, if it is still alive; a collected one releases the request now. */
  looseBody(): BodyReadable | null {
    const weak = this.unread;
    if (!(weak instanceof WeakRef)) return null;
    const body = weak.deref();
    if (body !== undefined) return body;
    // Collected, and its finalizer has not run yet.
    this.releaseUnread();
    return null;
  }

  /** The body was collected unread: discard the rest of the response so the connection is freed. */
  releaseUnread(): void {
    if (!(this.unread instanceof WeakRef) || this.done) return;
    libDebug?.(`${this.method} ${this.path}: response body collected unread; discarding the rest (up to ${UNREAD_DISCARD_LIMIT} bytes) to keep its connection`);
    this.discardRest();
  }

  /**
   * No one started reading the body within the dispatcher's unconsumedBodyTimeout: let it go.
   * A rest of at most UNREAD_DISCARD_LIMIT (or of unknown length, up to that) is discarded to
   * keep the connection; a longer one aborts the request. The body is destroyed with the error
   * either way, so a read that comes later fails rather than ending short.
   */
  onUnconsumedTimeout(ms: number): void {
    if (this.done) return;
    const body = this.body ?? this.looseBody();
    if (body === null) return;
    const remainder = body.unreadRemainder();
    if (remainder === false) return;
    const keep = remainder === null || remainder <= UNREAD_DISCARD_LIMIT;
    libDebug?.(`${this.method} ${this.path}: response body not read within unconsumedBodyTimeout (${ms} ms); ${keep ? 'discarding the rest to keep' : 'closing'} its connection`);
    const err = new RequestAbortedError(`response body was not read within unconsumedBodyTimeout (${ms} ms); its connection was released`);
    if (keep) this.discardRest();
    body.on('error', noop);
    body.destroy(err);
  }

  /** From here on the response's bytes are counted and dropped (see onResponseData). */
  discardRest(): void {
    this.settleUnread();
    unwatchUnconsumed(this);
    this.unread = 0;
    this.body = null;
    // No one can observe the outcome any more; don't keep the signal's listener either.
    this.removeSignal();
    this.controller?.resume();
  }

  /** The request settled: a body collected from now on has nothing to release. */
  settleUnread(): void {
    if (this.unread instanceof WeakRef) unreadBodies.unregister(this);
  }

  // --- internals ---

  /** Final failure, from the dispatcher or from dispatch() throwing. */
  fail(err: Error): void {
    if (this.done) return;
    this.settle(err);
    this.deliverError(err);
    const body = this.body ?? this.looseBody();
    this.settleUnread();
    unwatchUnconsumed(this);
    if (body !== null && !body.destroyed) {
      // Let callbacks already queued for this tick run against the body before it is torn down.
      queueMicrotask(() => {
        body.on('error', noop);
        body.destroy(err);
      });
    }
  }

  deliverError(err: Error): void {
    const reject = this.reject;
    if (reject !== null) {
      this.resolve = this.reject = null;
      reject(err);
      return;
    }
    const callback = this.callback;
    if (callback !== null) {
      this.callback = null;
      const resource = this.asyncResource;
      const data = { opaque: this.opaque } as AnyResponseData;
      // Never call back synchronously from inside request() / dispatch().
      queueMicrotask(() => {
        resource.runInAsyncScope(callback, null, err, data);
      });
    }
  }
}

// Chunks reach the body and nothing else: a dispatcher may say they are ours alone. On the
// prototype, so no request carries it.
Object.defineProperty(RequestHandler.prototype, kSoleReader, { value: true });

function dispatchRequest(
  dispatcher: RequestDispatcher,
  opts: RequestOptions<unknown>,
  handler: RequestHandler,
): void {
  try {
    dispatcher.dispatch(opts, handler);
  } catch (err) {
    handler.fail(err as Error);
  }
}

/**
 * Performs an HTTP request through `this` dispatcher. Without a callback it returns a promise of
 * the ResponseData; with one it calls back `(err, data)` and returns undefined.
 */
export function request<TOpaque = null>(
  this: RequestDispatcher,
  opts: RequestOptions<TOpaque>,
): Promise<ResponseData<TOpaque>>;
export function request<TOpaque = null>(
  this: RequestDispatcher,
  opts: RequestOptions<TOpaque>,
  callback: RequestCallback<TOpaque>,
): void;
export function request(
  this: RequestDispatcher,
  opts: RequestOptions<unknown>,
  callback?: AnyCallback,
): Promise<AnyResponseData> | void {
  if (callback === undefined) {
    let handler: RequestHandler;
    try {
      if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
      handler = new RequestHandler(opts, null);
    } catch (err) {
      return Promise.reject(err);
    }
    const promise = promiseInto<AnyResponseData>(handler);
    dispatchRequest(this, opts, handler);
    return promise;
  }

  let handler: RequestHandler;
  try {
    // Options first, then the callback (undici's order); a refused body stream is destroyed.
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
    if (typeof callback !== 'function') {
      const err = new InvalidArgumentError('invalid callback');
      destroyRequestBody(opts.body, err);
      throw err;
    }
    handler = new RequestHandler(opts, callback);
  } catch (err) {
    if (typeof callback !== 'function') throw err;
    const data = { opaque: (opts as { opaque?: unknown } | null)?.opaque } as AnyResponseData;
    queueMicrotask(() => callback(err as Error, data));
    return;
  }
  dispatchRequest(this, opts, handler);
}
