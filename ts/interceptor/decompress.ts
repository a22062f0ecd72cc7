// interceptors.decompress: undoes the response's content-encoding with the engine's decoders
// (ts/native/coding.ts), streaming: each compressed chunk goes through one synchronous call and
// its decoded bytes reach the handler at once, 64 KiB at a time, so pause() holds both the
// decoded output and the socket back.
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError } from '../core/errors.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { unconsumedBodyTimeoutOf } from '../handler/controller.js';
import { createContentDecoder, type ContentDecoder } from '../native/coding.js';
import type {
  DispatchController,
  DispatchFn,
  DispatchHandler,
  DispatchOptions,
  DispatcherComposeInterceptor,
  IncomingHeaders,
  RequestTimings,
} from '../core/types.js';

export interface DecompressInterceptorOptions {
  /** Leave responses with status >= 400 as they are. Default true. */
  skipErrorResponses?: boolean;
  /** Statuses left as they are. Default [204, 304]. */
  skipStatusCodes?: readonly number[];
  /** Most decoded bytes per response (each coding stage); 0 (the default): no limit. */
  maxSize?: number;
}

interface Settings {
  skipErrorResponses: boolean;
  skipStatusCodes: readonly number[];
  maxSize: number;
}

const DEFAULT_SKIP_STATUS_CODES: readonly number[] = Object.freeze([204, 304]);

function settings(opts: DecompressInterceptorOptions | undefined): Settings {
  if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('decompress options must be an object');
  const { skipErrorResponses = true, skipStatusCodes = DEFAULT_SKIP_STATUS_CODES, maxSize = 0 } = opts ?? {};
  if (typeof skipErrorResponses !== 'boolean') throw new InvalidArgumentError('skipErrorResponses must be a boolean');
  if (!Array.isArray(skipStatusCodes) || !skipStatusCodes.every((s) => Number.isInteger(s))) {
    throw new InvalidArgumentError('skipStatusCodes must be an array of integers');
  }
  if (!Number.isSafeInteger(maxSize) || maxSize < 0) throw new InvalidArgumentError('maxSize must be a non-negative integer');
  return { skipErrorResponses, skipStatusCodes, maxSize };
}

function withoutCodingHeaders(headers: IncomingHeaders): IncomingHeaders {
  const out: IncomingHeaders = {};
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'content-encoding' && lower !== 'content-length') out[name] = headers[name]!;
  }
  return out;
}

function contentEncodingOf(headers: IncomingHeaders): string | null {
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() !== 'content-encoding') continue;
    const v = headers[name]!;
    // Repeated fields are one comma-separated list (RFC 9110 §5.3).
    return Array.isArray(v) ? v.join(',') : v;
  }
  return null;
}

/**
 * Sits between the dispatcher and the user's handler. The handler sees this object's controller:
 * its pause/resume also gate the decoded bytes still to be delivered.
 */
class DecompressHandler implements DispatchHandler, DispatchController {
  readonly #handler: DispatchHandler;
  readonly #settings: Settings;
  #upstream: DispatchController | null = null;
  #decoder: ContentDecoder | null = null;
  #paused = false;
  /** The decoder may hold more output than it returned (a pause stopped the pump). */
  #pending = false;
  /** Decoded while paused (bytes the dispatcher had already read when the pause came). */
  #held: Buffer[] = [];
  #inputEnded = false;
  /** `finish` was called on the decoder. */
  #finished = false;
  #trailers: IncomingHeaders = {};
  #terminated = false;

  constructor(handler: DispatchHandler, s: Settings) {
    this.#handler = handler;
    this.#settings = s;
  }

  // The controller the user's handler gets.
  get aborted(): boolean {
    return this.#upstream?.aborted ?? false;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get reason(): Error | null {
    return this.#upstream?.reason ?? null;
  }
  get rawHeaders(): Buffer[] | null {
    const raw = this.#upstream?.rawHeaders ?? null;
    if (raw === null || this.#decoder === null) return raw;
    // The raw list agrees with the headers the handler got: no coding, no length.
    const out: Buffer[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (name !== 'content-encoding' && name !== 'content-length') out.push(raw[i]!, raw[i + 1]!);
    }
    return out;
  }
  get rawTrailers(): Buffer[] | null {
    return this.#upstream?.rawTrailers ?? null;
  }
  /** The request's timings (ferro), as the controller underneath has them. */
  get timings(): RequestTimings | undefined {
    return this.#upstream?.timings;
  }
  /** request() under this interceptor still lets an unread body go (api/unconsumed-bodies.ts). */
  get unconsumedBodyTimeout(): number {
    return this.#upstream === null ? 0 : unconsumedBodyTimeoutOf(this.#upstream);
  }
  abort(reason: Error): void {
    if (this.#inputEnded && this.#decoder !== null) {
      // The dispatcher already finished the request; only we can still report it.
      this.#fail(reason);
      return;
    }
    this.#upstream?.abort(reason);
  }
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    // Undecoded bodies pause the socket at once. Decoded ones pause it only when compressed bytes
    // arrive while paused: a reader that pauses after each chunk and resumes in the same tick (the
    // body stream does) then costs no round trip to the engine.
    if (this.#decoder === null) this.#pauseUpstream();
  }
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#decoder !== null && (this.#pending || this.#inputEnded)) this.#pump(null, true);
    if (!this.#paused && this.#upstreamPaused && !this.#terminated) {
      this.#upstreamPaused = false;
      this.#upstream?.resume();
    }
  }
  #upstreamPaused = false;
  #pauseUpstream(): void {
    if (this.#upstreamPaused) return;
    this.#upstreamPaused = true;
    this.#upstream?.pause();
  }

  // The dispatcher's side.
  onRequestStart(controller: DispatchController, context: object): void {
    this.#upstream = controller;
    this.#handler.onRequestStart?.(this, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#upstream = controller;
    this.#handler.onRequestUpgrade?.(this, statusCode, headers, socket);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#upstream = controller;
    const s = this.#settings;
    const coding = contentEncodingOf(headers);
    const skip =
      coding === null ||
      statusCode < 200 ||
      s.skipStatusCodes.includes(statusCode) ||
      (s.skipErrorResponses && statusCode >= 400);
    if (!skip) {
      // Throws for a hostile coding list: the dispatcher aborts the request with it.
      this.#decoder = createContentDecoder(coding, { maxSize: s.maxSize });
    }
    const out = this.#decoder === null ? headers : withoutCodingHeaders(headers);
    this.#handler.onResponseStart?.(this, statusCode, out, statusMessage);
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.#decoder === null) {
      this.#handler.onResponseData?.(this, chunk);
      return;
    }
    if (this.#terminated) return;
    let out: Buffer | null;
    try {
      out = this.#decoder.write(chunk);
    } catch (err) {
      controller.abort(err as Error);
      return;
    }
    if (this.#paused || this.#held.length > 0) {
      if (out !== null) this.#held.push(out);
      this.#pending = true;
      this.#pauseUpstream();
      return;
    }
    this.#pump(out, false);
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.#decoder === null) {
      this.#handler.onResponseEnd?.(this, trailers);
      return;
    }
    if (this.#terminated) return;
    this.#inputEnded = true;
    this.#trailers = trailers;
    if (!this.#paused && !this.#pending) this.#pump(null, true);
  }

  onResponseError(_controller: DispatchController, err: Error): void {
    this.#fail(err);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  /**
   * Hands decoded bytes to the handler until the decoder has none ready or the handler pauses;
   * after the input ended, finishes the stream and the response. `read`: ask the decoder first.
   */
  #pump(first: Buffer | null, read: boolean): void {
    const decoder = this.#decoder!;
    let out = first;
    try {
      if (read) out = this.#held.shift() ?? this.#next(decoder);
      while (out !== null) {
        this.#handler.onResponseData?.(this, out);
        if (this.#terminated) return;
        if (this.#paused) {
          this.#pending = true;
          return;
        }
        out = this.#held.shift() ?? this.#next(decoder);
      }
    } catch (err) {
      if (this.#inputEnded) this.#fail(err as Error);
      else this.#upstream!.abort(err as Error);
      return;
    }
    this.#pending = false;
    if (this.#inputEnded && !this.#terminated) {
      this.#terminated = true;
      this.#handler.onResponseEnd?.(this, this.#trailers);
    }
  }

  /** After the input ended the first call finishes the decoder; `read` drains the rest. */
  #next(decoder: ContentDecoder): Buffer | null {
    if (this.#inputEnded && !this.#finished) {
      this.#finished = true;
      return decoder.finish();
    }
    return decoder.read();
  }

  #fail(err: Error): void {
    if (this.#terminated) return;
    this.#terminated = true;
    this.#decoder?.release();
    this.#held = [];
    this.#handler.onResponseError?.(this, err);
  }
}

/** The decompress interceptor (experimental, as the interface marks it). */
export function decompress(opts?: DecompressInterceptorOptions): DispatcherComposeInterceptor {
  const s = settings(opts);
  return (dispatch: DispatchFn): DispatchFn =>
    function decompressInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      if (options.method === 'HEAD' || options.upgrade != null) {
        return dispatch(options, handler);
      }
      return dispatch(options, new DecompressHandler(toControllerHandler(handler), s));
    };
}
