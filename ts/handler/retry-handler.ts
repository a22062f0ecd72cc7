// RetryHandler (undici's name): sends a request again when an attempt fails with a retryable
// error or status, waiting as the policy says (retry-options.ts). When a response body is cut
// after the caller has started receiving it, the next attempt asks for the rest with `Range`
// (and `If-Match` on a strong ETag), so the caller sees one complete body, byte for byte.
import { assertHandlerObject } from '../core/request.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError, RequestRetryError } from '../core/errors.js';
import type { DispatchController, DispatchFn, DispatchHandler, DispatchOptions, IncomingHeaders, RequestTimings } from '../core/types.js';
import { rewriteHeaders } from './header-list.js';
import { toControllerHandler } from './legacy-handler.js';
import { replayBody } from './replayable-body.js';
import {
  resolveRetryOptions,
  validateRetryOptions,
  type OnRetryCallback as OnRetry,
  type ResolvedRetryOptions,
  type RetryCallback as Retry,
  type RetryContext as Context,
  type RetryOptions,
  type RetryState as State,
} from './retry-options.js';

/**
 * The controller the caller holds for the whole request. Each attempt has its own controller;
 * this one follows whichever is live, so a pause or an abort always reaches the right one.
 */
class RetryController implements DispatchController {
  #target: DispatchController | null = null;
  #paused = false;
  readonly #onAbort: (reason: Error) => void;

  constructor(onAbort: (reason: Error) => void) {
    this.#onAbort = onAbort;
  }

  follow(target: DispatchController): void {
    this.#target = target;
    if (this.#paused) target.pause();
  }

  get aborted(): boolean {
    return this.#target?.aborted ?? false;
  }
  get paused(): boolean {
    return this.#paused || (this.#target?.paused ?? false);
  }
  get reason(): Error | null {
    return this.#target?.reason ?? null;
  }
  get rawHeaders(): Buffer[] | null {
    return this.#target?.rawHeaders ?? null;
  }
  get rawTrailers(): Buffer[] | null {
    return this.#target?.rawTrailers ?? null;
  }
  /** The request's timings (ferro), as the controller underneath has them. */
  get timings(): RequestTimings | undefined {
    return this.#target?.timings;
  }

  abort(reason: Error): void {
    this.#target?.abort(reason);
    // Between attempts (a backoff wait) no attempt hears the abort: the handler must.
    this.#onAbort(reason);
  }
  pause(): void {
    this.#paused = true;
    this.#target?.pause();
  }
  resume(): void {
    this.#paused = false;
    this.#target?.resume();
  }
}

interface ContentRange {
  start: number;
  end: number | null;
  size: number | null;
}

/** `bytes start-end/size` (size may be `*`); null when absent or malformed. */
function parseContentRange(value: string | string[] | undefined): ContentRange | null {
  const m = typeof value === 'string' ? /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value.trim()) : null;
  if (m === null) return null;
  return { start: Number(m[1]), end: Number(m[2]), size: m[3] === '*' ? null : Number(m[3]) };
}

/** A retryable status response held back until the policy decides (delivered if it gives up). */
interface HeldResponse {
  statusCode: number;
  headers: IncomingHeaders;
  statusMessage: string | undefined;
  chunks: Buffer[];
}

export interface RetryHandlerOptions extends DispatchOptions {
  retryOptions?: RetryOptions;
}

export class RetryHandler implements DispatchHandler {
  readonly #dispatch: DispatchFn;
  readonly #handler: DispatchHandler;
  readonly #retry: ResolvedRetryOptions;
  #opts: DispatchOptions;
  readonly #controller = new RetryController((reason) => this.#onAbort(reason));
  /** Failed attempts so far. */
  #counter = 0;
  #dispatched = false;
  /** The caller has the response head: later attempts can only continue its body. */
  #headersSent = false;
  #resumable = false;
  /** The first response answered a Range request: every resume names its range too. */
  #ranged = false;
  /** Offset in the representation of the next byte the caller has not had. */
  #position = 0;
  /** Offset of its last byte, when known. */
  #end: number | null = null;
  #etag: string | null = null;
  /** The attempt in flight got a retryable status; its body is not the caller's. */
  #failure: RequestRetryError | null = null;
  /** The latest final response's status and headers (for an error about its body). */
  #statusCode = 0;
  #headers: IncomingHeaders = {};
  #held: HeldResponse | null = null;
  #pending = false;
  #timer: unknown = null;
  #abortReason: Error | null = null;
  #done = false;

  constructor(opts: RetryHandlerOptions, { dispatch, handler }: RetryHandler.RetryHandlers) {
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object');
    if (typeof dispatch !== 'function') throw new InvalidArgumentError('dispatch must be a function');
    assertHandlerObject(handler);
    const { retryOptions, ...rest } = opts;
    this.#retry = resolveRetryOptions(validateRetryOptions(retryOptions));
    this.#opts = rest;
    this.#dispatch = dispatch;
    this.#handler = toControllerHandler(handler);
  }

  /**
   * The controller the caller's handler is given, the same one for every attempt (undici's
   * property of this name; not in its types).
   */
  get controllerProxy(): DispatchController {
    return this.#controller;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#dispatched = true;
    this.#controller.follow(controller);
    if (this.#abortReason !== null) {
      controller.abort(this.#abortReason);
      return;
    }
    // Each attempt until the caller has a response head, as undici does (the controller is the
    // same stable one every time).
    if (this.#headersSent) return;
    this.#handler.onRequestStart?.(this.#controller, context);
  }

  onRequestUpgrade(_controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#done = true;
    this.#handler.onRequestUpgrade?.(this.#controller, statusCode, headers, socket);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    if (this.#done) return;
    if (statusCode < 200) {
      if (!this.#headersSent) this.#handler.onResponseStart?.(this.#controller, statusCode, headers, statusMessage);
      return;
    }
    this.#failure = null;
    this.#held = null;
    this.#statusCode = statusCode;
    this.#headers = headers;
    if (statusCode >= 300 && this.#retry.statusCodes.includes(statusCode)) {
      this.#failure = new RequestRetryError('Request failed', statusCode, { headers, data: { count: this.#counter + 1 } });
      if (!this.#headersSent && !this.#retry.throwOnError) this.#held = { statusCode, headers, statusMessage, chunks: [] };
      return;
    }
    if (this.#headersSent) {
      this.#continueWith(controller, statusCode, headers);
      return;
    }
    if (statusCode === 206) {
      const range = parseContentRange(headers['content-range']);
      const mismatch = range === null ? null : this.#rangeLengthMismatch(statusCode, headers, range);
      if (mismatch !== null) {
        controller.abort(mismatch);
        return;
      }
    }
    this.#headersSent = true;
    this.#checkpoint(statusCode, headers);
    this.#handler.onResponseStart?.(this.#controller, statusCode, headers, statusMessage);
  }

  /** A 206 whose content-length disagrees with its content-range cannot be stitched into one body. */
  #rangeLengthMismatch(statusCode: number, headers: IncomingHeaders, range: ContentRange): RequestRetryError | null {
    const length = headers['content-length'];
    if (typeof length !== 'string' || range.end === null || Number(length) === range.end - range.start + 1) return null;
    return new RequestRetryError('Content-Length mismatch', statusCode, { headers, data: { count: this.#counter + 1 } });
  }

  /** Notes where the body stands so a cut can be resumed (2xx bodies of GET-like requests). */
  #checkpoint(statusCode: number, headers: IncomingHeaders): void {
    if (this.#opts.method === 'HEAD') return;
    if (statusCode === 206) {
      const range = parseContentRange(headers['content-range']);
      if (range === null) return;
      this.#ranged = true;
      this.#position = range.start;
      this.#end = range.end;
    } else if (statusCode === 200) {
      const length = headers['content-length'];
      this.#end = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) - 1 : null;
    } else {
      return;
    }
    const etag = headers.etag;
    // A weak validator does not promise the same bytes, so it cannot guard a resume.
    this.#etag = typeof etag === 'string' && !etag.startsWith('W/') ? etag : null;
    this.#resumable = true;
  }

  /** A later attempt's response must carry on exactly where the caller's body stopped. */
  #continueWith(controller: DispatchController, statusCode: number, headers: IncomingHeaders): void {
    // undici's messages, word for word: callers match on them.
    let problem: string | null = null;
    const etag = headers.etag;
    if (this.#etag !== null && etag !== this.#etag) {
      problem = 'ETag mismatch';
    } else if (statusCode === 200 && this.#position === 0 && !this.#ranged) {
      // Nothing was delivered yet: a full response is as good as the first, if it is as long.
      const length = headers['content-length'];
      if (this.#end !== null && length !== undefined && length !== String(this.#end + 1)) {
        problem = 'Content-Length mismatch';
      }
    } else if (statusCode !== 206) {
      problem = 'server does not support the range header and the payload was partially consumed';
    } else {
      const range = parseContentRange(headers['content-range']);
      if (range === null || range.start !== this.#position || (this.#end !== null && range.end !== this.#end)) {
        problem = 'Content-Range mismatch';
      } else {
        const mismatch = this.#rangeLengthMismatch(statusCode, headers, range);
        if (mismatch !== null) return void controller.abort(mismatch);
      }
    }
    if (problem !== null) {
      controller.abort(new RequestRetryError(problem, statusCode, { headers, data: { count: this.#counter + 1 } }));
    }
  }

  onResponseData(_controller: DispatchController, chunk: Buffer): void {
    if (this.#done) return;
    if (this.#failure !== null) {
      this.#held?.chunks.push(chunk);
      return;
    }
    this.#position += chunk.length;
    this.#handler.onResponseData?.(this.#controller, chunk);
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.#done) return;
    const failure = this.#failure;
    if (failure !== null) {
      this.#failure = null;
      this.#consider(failure, trailers);
      return;
    }
    if (this.#resumable && this.#end !== null && this.#position !== this.#end + 1) {
      // undici's message and shape: the body did not fill the range it announced.
      this.#fail(new RequestRetryError('Content-Range mismatch', this.#statusCode, { headers: this.#headers, data: { count: this.#counter + 1 } }));
      return;
    }
    this.#done = true;
    this.#handler.onResponseEnd?.(this.#controller, trailers);
  }

  onResponseError(controller: DispatchController, err: Error): void {
    if (this.#done) return;
    this.#failure = null;
    this.#held = null;
    // An abort (the caller's, or a resume this handler refused) and a body the caller already
    // holds part of that cannot be continued are final.
    if (controller?.aborted || this.#abortReason !== null || (this.#headersSent && !this.#resumable)) {
      this.#fail(err);
      return;
    }
    this.#consider(err, null);
  }

  /** Asks the policy about a failed attempt: retry after its wait, or give up. */
  #consider(err: Error, trailers: IncomingHeaders | null): void {
    const held = this.#held;
    this.#held = null;
    const replay = replayBody(this.#opts.body, this.#opts.method, this.#dispatched);
    if (replay === null) {
      this.#giveUp(err, held, trailers);
      return;
    }
    if (replay.body !== this.#opts.body) this.#opts = { ...this.#opts, body: replay.body };
    this.#counter++;
    this.#pending = true;
    const context = { state: { counter: this.#counter }, opts: { ...this.#opts, retryOptions: this.#retry } };
    let timer: unknown;
    try {
      timer = this.#retry.retry(err, context, (verdict) => {
        // Ignored once aborted, or when a policy calls back twice.
        if (!this.#pending || this.#done) return;
        this.#pending = false;
        this.#timer = null;
        if (verdict != null) this.#giveUp(verdict, held, trailers);
        else this.#again();
      });
    } catch (thrown) {
      this.#pending = false;
      this.#giveUp(thrown as Error, held, trailers);
      return;
    }
    if (this.#pending) this.#timer = timer;
  }

  /** Out of retries: a held response goes to the caller as it came (throwOnError: false). */
  #giveUp(err: Error, held: HeldResponse | null, trailers: IncomingHeaders | null): void {
    if (held === null || this.#headersSent) {
      this.#fail(err);
      return;
    }
    this.#headersSent = true;
    const handler = this.#handler;
    handler.onResponseStart?.(this.#controller, held.statusCode, held.headers, held.statusMessage);
    for (const chunk of held.chunks) {
      if (this.#done) return;
      handler.onResponseData?.(this.#controller, chunk);
    }
    if (this.#done) return;
    this.#done = true;
    handler.onResponseEnd?.(this.#controller, trailers ?? {});
  }

  #again(): void {
    if (this.#done) return;
    let opts = this.#opts;
    if (this.#headersSent && (this.#position > 0 || this.#ranged)) {
      const range = `bytes=${this.#position}-${this.#end ?? ''}`;
      const etag = this.#etag;
      const extra: [string, string][] = [['range', range]];
      if (etag !== null) extra.push(['if-match', etag]);
      const headers = rewriteHeaders(opts.headers, (n) => n === 'range' || (etag !== null && n === 'if-match'), extra);
      opts = { ...opts, headers };
    }
    try {
      this.#dispatch(opts, this);
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  #fail(err: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#handler.onResponseError?.(this.#controller, err);
  }

  #onAbort(reason: Error): void {
    this.#abortReason ??= reason;
    if (!this.#pending) return;
    this.#pending = false;
    clearTimeout(this.#timer as ReturnType<typeof setTimeout>);
    this.#timer = null;
    this.#fail(reason);
  }
}

// undici's types are reached through the class (`RetryHandler.RetryOptions`, ...): the same names here.
export declare namespace RetryHandler {
  export type RetryState = State;
  export type RetryContext = Context;
  export type OnRetryCallback = OnRetry;
  export type RetryCallback = Retry;
  export type RetryOptions = import('./retry-options.js').RetryOptions;
  export interface RetryHandlers {
    dispatch: DispatchFn;
    handler: DispatchHandler;
  }
}
