// stream(): request() without the intermediate body stream — the response is written straight into
// the Writable the caller's factory returns, and the result arrives once that Writable finishes.
import { AsyncResource } from 'node:async_hooks';
import type { Writable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError, InvalidReturnValueError, RequestAbortedError } from '../core/errors.js';
import type {
  DispatchController,
  DispatchHandler,
  IncomingHeaders,
  RequestOptions,
  StreamData,
  StreamFactory,
} from '../core/types.js';
import { ApiHandler, checkApiOptions, destroyRequestBody } from './api-handler.js';
import { responseHeaders } from './response-head.js';
import type { RequestDispatcher } from './request.js';
import { promiseInto } from '../core/promise-into.js';
import { onWritableDone } from './writable-done.js';

// A method type, so a callback typed for a specific opaque stays assignable (bivariant check).
export type StreamCallback<TOpaque = null> = {
  callback(err: Error | null, data: StreamData<TOpaque>): void;
}['callback'];

type AnyStreamData = StreamData<unknown>;
type AnyCallback = (err: Error | null, data: AnyStreamData) => void;

function isWritable(value: unknown): value is Writable {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Writable).write === 'function' &&
    typeof (value as Writable).end === 'function' &&
    typeof (value as Writable).on === 'function'
  );
}

/**
 * The Writable asked to drain: `writableNeedDrain`, or for a Writable that predates it (legacy
 * streams define it as undefined) its state's `needDrain`, as undici reads it.
 */
function needsDrain(res: Writable): boolean {
  const flag = res.writableNeedDrain as boolean | undefined;
  if (flag !== undefined) return flag === true;
  return (res as { _writableState?: { needDrain?: boolean } })._writableState?.needDrain === true;
}

class StreamHandler extends ApiHandler implements DispatchHandler {
  readonly factory: StreamFactory<unknown>;
  /** Filled in place when the response ends; handed out with the result. */
  readonly trailers: Record<string, string> = {};
  // The factory and the callback run from the engine's turn; keep the caller's async context.
  readonly asyncResource = new AsyncResource('LIB_STREAM');
  callback: AnyCallback | null = null;
  resolve: ((data: AnyStreamData) => void) | null = null;
  reject: ((err: Error) => void) | null = null;
  res: Writable | null = null;
  /** The first failure; wins over whatever the Writable's teardown reports later. */
  error: Error | null = null;

  constructor(opts: RequestOptions<unknown>, factory: StreamFactory<unknown>) {
    checkApiOptions(opts);
    super(opts);
    this.factory = factory;
  }

  /**
   * Chunks that arrived while the Writable needed drain; written on its 'drain', in order. Made,
   * like the 'drain' listener, at the first pause: most responses never wait.
   */
  #queued: Buffer[] | null = null;
  /** The response ended while chunks were queued: end the Writable once they are written. */
  #endQueued = false;

  /** Pauses the request until the Writable drains. */
  #pause(controller: DispatchController, res: Writable): void {
    controller.pause();
    if (this.#queued !== null) return;
    this.#queued = [];
    res.on('drain', () => this.#onDrain(res));
  }

  #onDrain(res: Writable): void {
    if (res.destroyed) return;
    const queued = this.#queued!;
    while (queued.length > 0 && !needsDrain(res)) res.write(queued.shift()!);
    if (queued.length > 0) return;
    if (this.#endQueued) {
      this.#endQueued = false;
      res.end();
      return;
    }
    this.controller?.resume();
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders): void {
    if (this.done || this.res !== null) return;
    if (this.informational(controller, statusCode, headers)) return;
    let res: unknown;
    try {
      res = this.asyncResource.runInAsyncScope(this.factory, null, {
        statusCode,
        headers: responseHeaders(this.responseHeaders, controller, headers) as IncomingHttpHeaders,
        opaque: this.opaque,
        context: this.context as object,
        onInfo: this.onInfo,
        timings: controller.timings,
      });
    } catch (err) {
      controller.abort(err as Error);
      return;
    }
    if (!isWritable(res)) {
      controller.abort(new InvalidReturnValueError('expected Writable'));
      return;
    }
    this.res = res;
    onWritableDone(res, (err) => this.#onWritableDone(err));
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    const res = this.res;
    // A Writable destroyed by its owner takes nothing more; its 'close' reports the outcome.
    if (res === null || this.done || res.destroyed) return;
    // Never write into a Writable that asked to drain (a chunk may still arrive after pause()).
    const queued = this.#queued;
    if ((queued !== null && queued.length > 0) || needsDrain(res)) {
      this.#pause(controller, res);
      this.#queued!.push(chunk);
      return;
    }
    if (res.write(chunk) === false) this.#pause(controller, res);
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.done) return;
    this.settle(null);
    if (trailers != null) {
      const target = this.trailers as Record<string, string | string[]>;
      for (const key of Object.keys(trailers)) {
        // A '__proto__' trailer must stay a plain property.
        Object.defineProperty(target, key, { value: trailers[key], enumerable: true, configurable: true, writable: true });
      }
    }
    const res = this.res;
    if (res === null) this.deliver(new RequestAbortedError('response ended before its headers were received'));
    else if (res.destroyed) return; // closed early by its owner: a premature close (#onWritableDone)
    else if (this.#queued !== null && this.#queued.length > 0) this.#endQueued = true;
    else res.end();
  }

  onResponseError(_controller: DispatchController | null, err: Error): void {
    this.fail(err);
  }

  protected onAbortSignal(reason: Error): void {
    const res = this.res;
    // Once the Writable exists it owns the outcome: destroying it aborts the request below.
    if (res !== null && !res.destroyed && typeof res.destroy === 'function') res.destroy(reason);
    else this.abortRequest(reason);
  }

  /** Final failure, from the dispatcher or from dispatch() throwing. */
  fail(err: Error): void {
    if (this.done) return;
    this.error ??= err;
    this.settle(err);
    const res = this.res;
    // With a Writable, the result is reported once it has been torn down (#onWritableDone).
    if (res !== null && typeof res.destroy === 'function') {
      if (!res.destroyed) res.destroy(err);
      return;
    }
    this.deliver(err);
  }

  #onWritableDone(err: Error | null): void {
    if (err !== null) {
      this.error ??= err;
      this.abortRequest(err);
      this.deliver(this.error);
      return;
    }
    // Reported before the abort below can turn it into a failure. A Writable that finished before
    // the response did was ended early by its owner: nothing more can be written to it.
    this.deliver(this.error);
    // Only when still running: the error's stack capture is most of a small response's cost.
    if (!this.done) this.abortRequest(new RequestAbortedError());
  }

  deliver(err: Error | null): void {
    const data: AnyStreamData =
      err === null
        ? { opaque: this.opaque, trailers: this.trailers, context: this.context as object }
        : ({ opaque: this.opaque } as AnyStreamData);
    const reject = this.reject;
    const resolve = this.resolve;
    if (resolve !== null && reject !== null) {
      this.resolve = this.reject = null;
      if (err !== null) reject(err);
      else resolve(data);
      return;
    }
    const callback = this.callback;
    if (callback === null) return;
    this.callback = null;
    // Never call back synchronously from inside stream(), nor into the Writable's event emission.
    queueMicrotask(() => this.asyncResource.runInAsyncScope(callback, null, err, data));
  }
}

function dispatchStream(dispatcher: RequestDispatcher, opts: RequestOptions<unknown>, handler: StreamHandler): void {
  try {
    dispatcher.dispatch(opts, handler);
  } catch (err) {
    handler.fail(err as Error);
  }
}

/** Checks in undici's order: options, then the callback (when one is expected), then the factory. */
function createHandler(opts: RequestOptions<unknown>, factory: StreamFactory<unknown>, callback?: unknown): StreamHandler {
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
  try {
    if (callback !== undefined && typeof callback !== 'function') throw new InvalidArgumentError('invalid callback');
    if (typeof factory !== 'function') throw new InvalidArgumentError('invalid factory');
    return new StreamHandler(opts, factory);
  } catch (err) {
    // The caller handed us a stream it expects to be consumed; don't leave it hanging.
    destroyRequestBody((opts as RequestOptions<unknown> | null)?.body, err as Error);
    throw err;
  }
}

/**
 * Performs a request through `this` dispatcher, writing the response body into the Writable that
 * `factory` returns. Without a callback it returns a promise of the StreamData.
 */
export function stream<TOpaque = null>(
  this: RequestDispatcher,
  opts: RequestOptions<TOpaque>,
  factory: StreamFactory<TOpaque>,
): Promise<StreamData<TOpaque>>;
export function stream<TOpaque = null>(
  this: RequestDispatcher,
  opts: RequestOptions<TOpaque>,
  factory: StreamFactory<TOpaque>,
  callback: StreamCallback<TOpaque>,
): void;
export function stream(
  this: RequestDispatcher,
  opts: RequestOptions<unknown>,
  factory: StreamFactory<unknown>,
  callback?: AnyCallback,
): Promise<AnyStreamData> | void {
  if (callback === undefined) {
    let handler: StreamHandler;
    try {
      handler = createHandler(opts, factory);
    } catch (err) {
      return Promise.reject(err);
    }
    const promise = promiseInto<AnyStreamData>(handler);
    dispatchStream(this, opts, handler);
    return promise;
  }

  let handler: StreamHandler;
  try {
    handler = createHandler(opts, factory, callback);
  } catch (err) {
    if (typeof callback !== 'function') throw err;
    const data = { opaque: (opts as { opaque?: unknown } | null)?.opaque } as AnyStreamData;
    queueMicrotask(() => callback(err as Error, data));
    return;
  }
  handler.callback = callback;
  dispatchStream(this, opts, handler);
}
