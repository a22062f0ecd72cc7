// interceptors.dump(opts): the caller gets status and headers; the body is read and thrown away,
// up to `maxSize` bytes, so the connection can be reused without the caller reading anything.
// Past the limit the connection is closed instead: the request fails (RequestAbortedError), or
// with `abortOnDumped` it ends normally with what was dumped (`waitForTrailers` reads on to the
// trailers when the response announces some). Per request: `dumpMaxSize`, `abortOnDumped`,
// `waitForTrailers`.
import { InvalidArgumentError, RequestAbortedError } from '../core/errors.js';
import type {
  DispatchController,
  DispatcherComposeInterceptor,
  DispatchHandler,
  DispatchOptions,
  IncomingHeaders,
  RequestTimings,
} from '../core/types.js';
import { DecoratorHandler } from '../handler/decorator-handler.js';

export interface DumpInterceptorOpts {
  maxSize?: number;
  abortOnDumped?: boolean;
  waitForTrailers?: boolean;
}

interface DumpSettings {
  maxSize: number;
  abortOnDumped: boolean;
  waitForTrailers: boolean;
}

const DEFAULT_MAX_SIZE = 1024 * 1024;

function settings(o: { maxSize?: unknown; abortOnDumped?: unknown; waitForTrailers?: unknown }, fallback: DumpSettings): DumpSettings {
  const { maxSize, abortOnDumped, waitForTrailers } = o;
  if (maxSize != null && (typeof maxSize !== 'number' || !Number.isFinite(maxSize) || maxSize < 0)) {
    throw new InvalidArgumentError('dump: maxSize must be a non-negative number');
  }
  if (abortOnDumped != null && typeof abortOnDumped !== 'boolean') throw new InvalidArgumentError('dump: abortOnDumped must be a boolean');
  if (waitForTrailers != null && typeof waitForTrailers !== 'boolean') throw new InvalidArgumentError('dump: waitForTrailers must be a boolean');
  return {
    maxSize: (maxSize as number | undefined) ?? fallback.maxSize,
    abortOnDumped: (abortOnDumped as boolean | undefined) ?? fallback.abortOnDumped,
    waitForTrailers: (waitForTrailers as boolean | undefined) ?? fallback.waitForTrailers,
  };
}

/** What the caller holds: its abort after the head is kept for the end, so the body is still drained. */
class DumpController implements DispatchController {
  readonly #inner: DispatchController;
  readonly #dump: DumpHandler;
  constructor(inner: DispatchController, dump: DumpHandler) {
    this.#inner = inner;
    this.#dump = dump;
  }
  get aborted(): boolean {
    return this.#inner.aborted || this.#dump.deferredAbort !== null;
  }
  get paused(): boolean {
    return this.#inner.paused;
  }
  get reason(): Error | null {
    return this.#dump.deferredAbort ?? this.#inner.reason;
  }
  get rawHeaders(): Buffer[] | null {
    return this.#inner.rawHeaders;
  }
  get rawTrailers(): Buffer[] | null {
    return this.#inner.rawTrailers;
  }
  /** The request's timings (ferro), as the controller underneath has them. */
  get timings(): RequestTimings | undefined {
    return this.#inner.timings;
  }
  abort(reason: Error): void {
    if (this.#dump.headed) this.#dump.deferredAbort ??= reason;
    else this.#inner.abort(reason);
  }
  pause(): void {
    this.#inner.pause();
  }
  resume(): void {
    this.#inner.resume();
  }
}

class DumpHandler extends DecoratorHandler {
  readonly #s: DumpSettings;
  #size = 0;
  #controller: DumpController | null = null;
  /** Set when this handler closed the connection on purpose and the caller should see an end. */
  #endOnAbort: Error | null = null;
  #trailersAhead = false;
  headed = false;
  deferredAbort: Error | null = null;

  constructor(s: DumpSettings, handler: DispatchHandler) {
    super(handler);
    this.#s = s;
  }

  #outer(controller: DispatchController): DumpController {
    this.#controller ??= new DumpController(controller, this);
    return this.#controller;
  }

  override onRequestStart(controller: DispatchController, context: object): void {
    this.#controller = new DumpController(controller, this);
    super.onRequestStart(this.#controller, context);
  }

  override onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    const outer = this.#outer(controller);
    if (statusCode < 200) {
      super.onResponseStart(outer, statusCode, headers, statusMessage);
      return;
    }
    this.#trailersAhead = this.#s.waitForTrailers && headers.trailer != null;
    const length = headers['content-length'];
    const declared = typeof length === 'string' ? Number(length) : NaN;
    this.headed = true;
    if (declared > this.#s.maxSize && !this.#s.abortOnDumped) {
      controller.abort(this.#tooLarge(declared));
      return;
    }
    super.onResponseStart(outer, statusCode, headers, statusMessage);
    if (declared > this.#s.maxSize && !this.#trailersAhead) this.#closeDumped(controller);
  }

  #tooLarge(size: number): RequestAbortedError {
    return new RequestAbortedError(`Response size (${size}) larger than maxSize (${this.#s.maxSize})`);
  }

  /** Done dumping: close the connection, and let the caller see a normal end. */
  #closeDumped(controller: DispatchController): void {
    this.#endOnAbort = new RequestAbortedError(`Response dumped (${this.#size}) for max size (${this.#s.maxSize})`);
    controller.abort(this.#endOnAbort);
  }

  override onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#size <= this.#s.maxSize || this.#endOnAbort !== null) return;
    if (!this.#s.abortOnDumped) controller.abort(this.#tooLarge(this.#size));
    else if (!this.#trailersAhead) this.#closeDumped(controller);
  }

  override onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    const outer = this.#outer(controller);
    if (this.deferredAbort !== null) super.onResponseError(outer, this.deferredAbort);
    // A body dumped right up to maxSize ends without its trailers, as undici's (unless asked for).
    else super.onResponseEnd(outer, this.#size === this.#s.maxSize && !this.#s.waitForTrailers ? {} : trailers);
  }

  override onResponseError(controller: DispatchController, error: Error): void {
    const outer = this.#outer(controller);
    if (error === this.#endOnAbort && this.deferredAbort === null) super.onResponseEnd(outer, {});
    else super.onResponseError(outer, this.deferredAbort ?? error);
  }
}

export function dump(opts: DumpInterceptorOpts = {}): DispatcherComposeInterceptor {
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('dump: options must be an object');
  const defaults = settings(opts, { maxSize: DEFAULT_MAX_SIZE, abortOnDumped: false, waitForTrailers: false });
  return (dispatch) =>
    function dumpInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      const s = settings(
        { maxSize: options.dumpMaxSize, abortOnDumped: options.abortOnDumped, waitForTrailers: options.waitForTrailers },
        defaults,
      );
      return dispatch(options, new DumpHandler(s, handler));
    };
}
