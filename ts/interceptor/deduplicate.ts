// The deduplicate interceptor: while a request is in flight, identical ones (origin, method, path,
// headers minus excludeHeaderNames) join it instead of reaching the origin; every caller gets the
// same status, headers and body. Each caller has its own controller: pausing buffers only for it
// (up to maxBufferSize), aborting detaches only it, and the shared request is cancelled only
// when no caller is left.
import { hasSubscribers, publish as publishOn } from '../core/diagnostics.js';
import { RequestAbortedError } from '../core/errors.js';
import { withQuery } from '../core/headers.js';
import type {
  DispatchController,
  DispatchFn,
  DispatchHandler,
  DispatchOptions,
  DispatcherComposeInterceptor,
  IncomingHeaders,
  RequestTimings,
} from '../core/types.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { RequestController } from '../handler/controller.js';
import { SAFE_METHODS } from '../cache/cache-store.js';
import { originOf } from '../cache/entry-key.js';
import { headerRecord, headerText } from '../cache/request-headers.js';

export interface DeduplicateInterceptorOptions {
  /** Safe methods to deduplicate. Default ['GET']. */
  methods?: string[];
  /** A request carrying any of these headers is never deduplicated. */
  skipHeaderNames?: string[];
  /** Headers left out of the identity of a request. */
  excludeHeaderNames?: string[];
  /** Bytes buffered for one paused waiting caller before it is failed. Default 5 MiB. */
  maxBufferSize?: number;
}

/**
 * Published on `lib:request:pending-requests`: `added` when a request goes to the origin and
 * others may join it, `joined` when a caller attaches to it, `removed` when it can no longer be
 * joined (its response has started, or it ended, failed or was cancelled). `size` is the number
 * of joinable requests after the change; `callers` the callers attached to this one.
 */
export interface PendingRequestsMessage {
  type: 'added' | 'joined' | 'removed';
  key: string;
  size: number;
  callers: number;
}

// Option checks throw TypeError with undici's messages, word for word: code written for undici
// matches on both.
function nameList(value: unknown, name: string): Set<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value)) throw new TypeError(`expected opts.${name} to be an array, got ${typeof value}`);
  if (!value.every((v) => typeof v === 'string')) throw new TypeError(`expected opts.${name} to only contain strings`);
  return new Set(value.map((v: string) => v.toLowerCase()));
}

/** One caller attached to a shared request; the controller its handler sees (handler/controller.ts). */
class Caller extends RequestController {
  readonly #shared: SharedRequest;
  #buffered: Buffer[] = [];
  #bufferedBytes = 0;
  #ending: IncomingHeaders | null = null;
  #flushScheduled = false;

  constructor(shared: SharedRequest, handler: DispatchHandler, context: object) {
    super(handler, context);
    this.#shared = shared;
  }

  get rawHeaders(): Buffer[] | null {
    return this.#shared.controller?.rawHeaders ?? null;
  }
  get rawTrailers(): Buffer[] | null {
    return this.#shared.controller?.rawTrailers ?? null;
  }
  /** The request's timings (ferro), as the controller underneath has them. */
  get timings(): RequestTimings | undefined {
    return this.#shared.controller?.timings;
  }

  protected override onPause(): void {
    this.#shared.callerPaused();
  }

  protected override onResume(): void {
    this.#shared.callerResumed();
    // Buffered bytes go out later, never inside the caller's resume() (a stream's _read, typically).
    if (!this.#flushScheduled && (this.#buffered.length > 0 || this.#ending !== null)) {
      this.#flushScheduled = true;
      queueMicrotask(() => {
        this.#flushScheduled = false;
        this.#flush();
      });
    }
  }

  headers(statusCode: number, headers: IncomingHeaders, statusMessage: string | undefined): void {
    // A copy each: a handler may edit the object it is given.
    if (!this.done) this.call(() => this.handler.onResponseStart?.(this, statusCode, { ...headers }, statusMessage));
  }

  data(chunk: Buffer, maxBufferSize: number): void {
    if (this.done) return;
    if (this.paused || this.#buffered.length > 0) {
      this.#buffered.push(chunk);
      this.#bufferedBytes += chunk.length;
      if (this.#bufferedBytes > maxBufferSize) {
        this.abort(new RequestAbortedError(`Deduplicated waiting handler exceeded maxBufferSize (${maxBufferSize} bytes) while paused`));
      }
      return;
    }
    this.call(() => this.handler.onResponseData?.(this, chunk));
  }

  /** The shared response ended: the end goes out once what is buffered has. */
  finish(trailers: IncomingHeaders): void {
    if (this.done) return;
    this.#ending = trailers;
    if (!this.paused) this.#flush();
  }

  #flush(): void {
    while (!this.done && !this.paused && this.#buffered.length > 0) {
      const chunk = this.#buffered.shift()!;
      this.#bufferedBytes -= chunk.length;
      this.call(() => this.handler.onResponseData?.(this, chunk));
    }
    if (this.done || this.paused || this.#ending === null) return;
    this.end(this.#ending);
  }

  protected onSettled(): void {
    this.#buffered = [];
    this.#bufferedBytes = 0;
    this.#shared.detach(this);
  }
}

/** The one request that reaches the origin; the handler the next dispatcher drives. */
class SharedRequest implements DispatchHandler {
  readonly key: string;
  readonly #callers = new Set<Caller>();
  readonly #maxBufferSize: number;
  readonly #onUnjoinable: (shared: SharedRequest) => void;
  readonly #context: object = {};
  controller: DispatchController | null = null;
  #paused = 0;
  #started = false;
  #settled = false;

  constructor(key: string, maxBufferSize: number, onUnjoinable: (shared: SharedRequest) => void) {
    this.key = key;
    this.#maxBufferSize = maxBufferSize;
    this.#onUnjoinable = onUnjoinable;
  }

  get callers(): number {
    return this.#callers.size;
  }

  attach(handler: DispatchHandler): void {
    const caller = new Caller(this, handler, this.#context);
    this.#callers.add(caller);
    caller.start();
  }

  detach(caller: Caller): void {
    if (!this.#callers.delete(caller)) return;
    if (caller.paused) this.#paused--;
    if (this.#settled) return;
    if (this.#callers.size === 0) {
      // Nobody is left to hear the answer: cancel the request at the origin.
      this.#settled = true;
      this.#onUnjoinable(this);
      this.controller?.abort(new RequestAbortedError());
    } else {
      this.#syncFlow();
    }
  }

  callerPaused(): void {
    this.#paused++;
    this.#syncFlow();
  }

  callerResumed(): void {
    this.#paused--;
    this.#syncFlow();
  }

  /** The origin is paused only while every caller is: one slow caller buffers, the rest go on. */
  #syncFlow(): void {
    const c = this.controller;
    if (c === null || this.#settled) return;
    if (this.#paused >= this.#callers.size && this.#callers.size > 0) c.pause();
    else if (c.paused) c.resume();
  }

  onRequestStart(controller: DispatchController, context: object): void {
    // Callers hold this object since they joined: they see what the request carries from below
    // (a redirect's history, which a cache outside judges a chain by).
    Object.assign(this.#context, context);
    this.controller = controller;
    if (this.#settled) controller.abort(new RequestAbortedError());
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.controller = controller;
    this.#started = true;
    // Late arrivals would miss bytes already delivered: from here on they make their own request.
    this.#onUnjoinable(this);
    for (const caller of [...this.#callers]) caller.headers(statusCode, headers, statusMessage);
    this.#syncFlow();
  }

  onResponseData(_controller: DispatchController, chunk: Buffer): void {
    // While every caller is paused the origin is paused too, and what is still arriving was
    // already on its way: the limit is for a caller left behind while others read on.
    const limit = this.#paused >= this.#callers.size ? Infinity : this.#maxBufferSize;
    for (const caller of [...this.#callers]) caller.data(chunk, limit);
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    this.#settled = true;
    for (const caller of [...this.#callers]) caller.finish(trailers);
  }

  onResponseError(_controller: DispatchController, error: Error): void {
    if (!this.#started) this.#onUnjoinable(this);
    const wasSettled = this.#settled;
    this.#settled = true;
    // After a cancellation nobody is attached; otherwise every caller hears the failure.
    if (!wasSettled || this.#callers.size > 0) for (const caller of [...this.#callers]) caller.fail(error);
  }
}

export function deduplicate(options: DeduplicateInterceptorOptions = {}): DispatcherComposeInterceptor {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`expected type of opts to be an Object, got ${options === null ? 'null' : typeof options}`);
  }
  const methodList: unknown = options.methods ?? ['GET'];
  if (!Array.isArray(methodList)) throw new TypeError(`expected opts.methods to be an array, got ${typeof methodList}`);
  for (const m of methodList) {
    if (!SAFE_METHODS.has(m)) throw new TypeError(`expected opts.methods to only contain safe HTTP methods, got ${String(m)}`);
  }
  const methods = new Set<string>(methodList);
  const skip = nameList(options.skipHeaderNames, 'skipHeaderNames');
  const exclude = nameList(options.excludeHeaderNames, 'excludeHeaderNames');
  const { maxBufferSize = 5 * 1024 * 1024 } = options;
  if (typeof maxBufferSize !== 'number' || !Number.isFinite(maxBufferSize) || maxBufferSize <= 0) {
    throw new TypeError(`expected opts.maxBufferSize to be a positive finite number, got ${String(maxBufferSize)}`);
  }
  const pending = new Map<string, SharedRequest>();

  const publish = (type: PendingRequestsMessage['type'], shared: SharedRequest): void => {
    // Through core/diagnostics, so publishUndiciChannels() mirrors it as undici:request:pending-requests.
    if (!hasSubscribers('request:pending-requests')) return;
    const message: PendingRequestsMessage = { type, key: shared.key, size: pending.size, callers: shared.callers };
    publishOn('request:pending-requests', message);
  };
  const unjoinable = (shared: SharedRequest): void => {
    if (pending.get(shared.key) !== shared) return;
    pending.delete(shared.key);
    publish('removed', shared);
  };

  /** The identity of a request, or null when it is not to be deduplicated. */
  const keyOf = (opts: DispatchOptions, fallbackOrigin: string | URL | null | undefined): string | null => {
    if (!methods.has(opts.method) || opts.upgrade || (opts.body !== undefined && opts.body !== null)) return null;
    try {
      const headers = headerRecord(opts.headers);
      const names = Object.keys(headers).sort();
      if (names.some((n) => skip.has(n))) return null;
      const parts = names.filter((n) => !exclude.has(n)).map((n) => [n, headerText(headers[n])]);
      return JSON.stringify([originOf(opts.origin ?? fallbackOrigin) ?? '', opts.method, withQuery(opts.path, opts.query), parts]);
    } catch {
      // Malformed input: the dispatcher reports it with its own typed error.
      return null;
    }
  };

  return (dispatch: DispatchFn, interceptorOrigin?: string | URL | null): DispatchFn =>
    (opts: DispatchOptions, handler: DispatchHandler): boolean => {
      const key = keyOf(opts, interceptorOrigin);
      if (key === null) return dispatch(opts, handler);
      const joined = pending.get(key);
      if (joined !== undefined) {
        joined.attach(toControllerHandler(handler));
        publish('joined', joined);
        return true;
      }
      const shared = new SharedRequest(key, maxBufferSize, unjoinable);
      pending.set(key, shared);
      shared.attach(toControllerHandler(handler));
      publish('added', shared);
      try {
        return dispatch(opts, shared);
      } catch (err) {
        unjoinable(shared);
        throw err;
      }
    };
}
