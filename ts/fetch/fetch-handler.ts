// One network round trip of fetch: the controller-based dispatch handler that turns the
// dispatcher's callbacks into a response head (a promise) and a pull-based body ReadableStream
// whose backpressure pauses and resumes the dispatcher.
import type { Transform } from 'node:stream';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';

export interface ResponseHead {
  status: number;
  statusText: string;
  headers: Headers;
}

/** The TypeError fetch rejects with for network errors; the dispatcher's error is the cause. */
export function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

/** An abort signal's reason, as fetch rejects with it. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

const BODY_HIGH_WATER_MARK = 64 * 1024;

function toHeaders(headers: IncomingHeaders): Headers {
  const out = new Headers();
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else if (value !== undefined) out.append(name, value);
  }
  return out;
}

// A view rather than the Buffer itself, so body readers get plain Uint8Arrays as with Node's fetch.
const toBytes = (chunk: Buffer): Uint8Array => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);

export class FetchHandler implements DispatchHandler {
  readonly head: Promise<ResponseHead>;
  #resolveHead!: (head: ResponseHead) => void;
  #rejectHead!: (err: unknown) => void;
  #headSettled = false;

  readonly #signal: AbortSignal;
  #controller: DispatchController | null = null;
  /** The signal's reason once aborted; wins over whatever error the abort produces downstream. */
  #aborted = false;
  #abortReason: unknown = undefined;
  /** The dispatcher reported the end or an error. */
  #finished = false;

  // Body bytes that arrived before the body stream was attached, and how the response ended.
  #pending: Buffer[] = [];
  #ended = false;
  #error: unknown = undefined;
  #discarding = false;

  #stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  #streamDone = false;
  #decoders: Transform[] = [];

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    this.head = new Promise<ResponseHead>((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
    // The caller may return before awaiting (e.g. a synchronous dispatch throw); never unhandled.
    this.head.catch(() => {});
    signal.addEventListener('abort', this, { once: true });
  }

  handleEvent(): void {
    this.abort(abortReason(this.#signal));
  }

  /** Aborts the round trip: a pending head rejects, an attached body errors, with `reason`. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#abortReason = reason;
    this.#failHead(reason);
    this.#failBody(reason);
    if (this.#controller !== null && !this.#finished) {
      this.#controller.abort(reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError'));
    }
  }

  // --- DispatchHandler ---

  onRequestStart(controller: DispatchController): void {
    this.#controller = controller;
    if (this.#aborted) controller.abort(new DOMException('This operation was aborted', 'AbortError'));
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#controller = controller;
    // Informational responses (and an unrequested 101) are not what fetch returns.
    if (statusCode < 200 || this.#headSettled) return;
    let parsed: Headers;
    try {
      parsed = toHeaders(headers);
    } catch (err) {
      controller.abort(err as Error);
      return;
    }
    this.#headSettled = true;
    this.#resolveHead({ status: statusCode, statusText: statusMessage ?? '', headers: parsed });
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.#discarding || this.#streamDone) return;
    if (this.#stream === null) {
      // Held until the body is attached; pausing bounds how much piles up meanwhile.
      this.#pending.push(chunk);
      controller.pause();
      return;
    }
    if (!this.#write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#finish();
    if (this.#stream === null) this.#ended = true;
    else this.#end();
  }

  onResponseError(_controller: DispatchController, error: Error): void {
    this.#finish();
    if (this.#aborted) return; // already settled with the signal's reason
    if (!this.#headSettled) return this.#failHead(fetchFailed(error));
    const err = new TypeError('terminated', { cause: error });
    if (this.#stream === null) this.#error = err;
    else this.#failBody(err);
  }

  // --- after the head ---

  /** The response will not be read (a followed redirect, a null-body status): drop its bytes. */
  discard(): void {
    this.#discarding = true;
    this.#pending = [];
    this.#streamDone = true;
    if (this.#finished) this.#detach();
    else this.#controller?.resume();
  }

  /** The body as a ReadableStream, its bytes passed through `decoders` in order. */
  attachBody(decoders: Transform[]): ReadableStream<Uint8Array> {
    this.#decoders = decoders;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => this.#start(controller),
        pull: () => this.#pull(),
        cancel: (reason) => this.#cancel(reason),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: BODY_HIGH_WATER_MARK }),
    );
  }

  #start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#stream = controller;
    const decoders = this.#decoders;
    if (decoders.length > 0) {
      for (let i = 0; i < decoders.length; i++) {
        const d = decoders[i]!;
        d.on('error', (err) => this.#failBody(err));
        if (i + 1 < decoders.length) d.pipe(decoders[i + 1]!);
      }
      const first = decoders[0]!;
      const last = decoders[decoders.length - 1]!;
      first.on('drain', () => this.#resumeDispatcher());
      last.on('data', (chunk: Buffer) => {
        if (this.#streamDone) return;
        controller.enqueue(toBytes(chunk));
        if ((controller.desiredSize ?? 0) <= 0) last.pause();
      });
      last.on('end', () => this.#closeBody());
    }
    if (this.#aborted) return this.#failBody(this.#abortReason);
    const pending = this.#pending;
    this.#pending = [];
    let wantMore = true;
    for (const chunk of pending) wantMore = this.#write(chunk);
    if (this.#error !== undefined) this.#failBody(this.#error);
    else if (this.#ended) this.#end();
    else if (wantMore) this.#resumeDispatcher();
  }

  #pull(): void {
    const decoders = this.#decoders;
    if (decoders.length > 0) decoders[decoders.length - 1]!.resume();
    else this.#resumeDispatcher();
  }

  #cancel(reason: unknown): void {
    this.#streamDone = true;
    this.#detach();
    if (!this.#finished && this.#controller !== null) {
      this.#controller.abort(reason instanceof Error ? reason : new DOMException('The body was cancelled', 'AbortError'));
    }
  }

  /** Feeds one chunk on; false when the consumer has enough for now. */
  #write(chunk: Buffer): boolean {
    if (this.#streamDone) return true;
    const decoders = this.#decoders;
    if (decoders.length > 0) return decoders[0]!.write(chunk);
    const stream = this.#stream!;
    stream.enqueue(toBytes(chunk));
    return (stream.desiredSize ?? 0) > 0;
  }

  #end(): void {
    if (this.#decoders.length > 0) this.#decoders[0]!.end();
    else this.#closeBody();
  }

  #resumeDispatcher(): void {
    if (!this.#finished && this.#controller?.paused === true) this.#controller.resume();
  }

  #finish(): void {
    this.#finished = true;
    if (this.#discarding) this.#detach();
  }

  #closeBody(): void {
    if (this.#streamDone) return;
    this.#streamDone = true;
    this.#stream!.close();
    this.#detach();
  }

  #failHead(err: unknown): void {
    if (this.#headSettled) return;
    this.#headSettled = true;
    this.#rejectHead(err);
    this.#detach();
  }

  #failBody(err: unknown): void {
    if (this.#streamDone || this.#stream === null) return;
    this.#streamDone = true;
    this.#stream.error(err);
    for (const d of this.#decoders) d.destroy();
    this.#detach();
  }

  /** Nothing more can reach the user: stop listening to the signal. */
  #detach(): void {
    this.#signal.removeEventListener('abort', this);
  }
}
