// One network round trip of fetch: the controller-based dispatch handler that turns the
// dispatcher's callbacks into a response head (a promise) and, when someone asks for it, a
// pull-based body ReadableStream whose backpressure pauses and resumes the dispatcher.
//
// Body bytes wait here until the stream is first pulled (someone reads it). A Response consumer
// (arrayBuffer/text/json, see fetch-response.ts) that comes first takes them directly instead:
// no web stream reads, no per-chunk promises.
import type { Transform } from 'node:stream';
import type { DispatchController, DispatchHandler, IncomingHeaders, RequestTimings } from '../core/types.js';
import { concatBytes, decodeText } from '../api/body-bytes.js';

export interface ResponseHead {
  status: number;
  statusText: string;
  /** As the dispatcher reported them; the Response's Headers are filled from these when first used. */
  headers: IncomingHeaders;
}

/** What a Response consumer can take straight from the handler. */
export type DirectKind = 'arrayBuffer' | 'bytes' | 'text' | 'json';

interface DirectConsumer {
  kind: DirectKind;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The TypeError fetch rejects with for network errors; the dispatcher's error is the cause. */
export function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

/** An abort signal's reason, as fetch rejects with it. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

// Bytes the body may hold unread before the dispatcher is paused.
const BODY_HIGH_WATER_MARK = 64 * 1024;
// The stream's own mark is 0, so it pulls only for a reader; the handler bounds its queue instead.
const STREAM_STRATEGY = { highWaterMark: 0, size: (chunk: Uint8Array): number => chunk.byteLength };

/** One response header as Headers.get would give it (repeats joined by ", "); null if absent. */
export function headerValue(headers: IncomingHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Copies dispatcher headers into a Headers object (a Response's own). */
export function fillHeaders(out: Headers, headers: IncomingHeaders): void {
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else if (value !== undefined) out.append(name, value);
  }
}

// A view rather than the Buffer itself, so body readers get plain Uint8Arrays as with Node's fetch.
const toBytes = (chunk: Buffer): Uint8Array => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);

function noop(): void {}

/** A whole body as a Response consumer returns it (throws on JSON that does not parse). */
export function bodyValue(kind: DirectKind, chunks: Buffer[], length: number): unknown {
  if (kind === 'arrayBuffer') return concatBytes(chunks, length, true).buffer;
  if (kind === 'bytes') return concatBytes(chunks, length, true);
  const text = decodeText(chunks, length, null);
  return kind === 'text' ? text : JSON.parse(text);
}

export class FetchHandler implements DispatchHandler {
  readonly head: Promise<ResponseHead>;
  #resolveHead!: (head: ResponseHead) => void;
  #rejectHead!: (err: unknown) => void;
  #headSettled = false;

  readonly #signal: AbortSignal | null;
  /** Kept reachable while the signal matters (see fetch.ts, Outgoing.signalOwners); dropped at detach. */
  #signalOwners: readonly object[] | null;
  #controller: DispatchController | null = null;
  /** The signal's reason once aborted; wins over whatever error the abort produces downstream. */
  #aborted = false;
  #abortReason: unknown = undefined;
  /** The dispatcher reported the end or an error. */
  #finished = false;

  // Body bytes that arrived before the body stream was first read, and how the response ended.
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #ended = false;
  #error: unknown = undefined;
  #discarding = false;

  /** Body bytes received, and who hears the request's timings when the response ends (resource-timing.ts). */
  #received = 0;
  #onEnded: ((timings: RequestTimings | undefined, received: number) => void) | null = null;
  #timings: RequestTimings | undefined = undefined;
  #endedOk = false;

  #stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The stream has been pulled (or decodes): bytes go through it from now on. */
  #flowing = false;
  #direct: DirectConsumer | null = null;
  #streamDone = false;
  #decoders: Transform[] = [];

  constructor(signal: AbortSignal | null, signalOwners: readonly object[] = []) {
    this.#signal = signal;
    this.#signalOwners = signalOwners;
    this.head = new Promise<ResponseHead>((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
    // The caller may return before awaiting (e.g. a synchronous dispatch throw); never unhandled.
    this.head.catch(() => {});
    signal?.addEventListener('abort', this, { once: true });
  }

  handleEvent(): void {
    this.abort(abortReason(this.#signal!));
  }

  /** Aborts the round trip: a pending head rejects, an attached body errors, with `reason`. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#abortReason = reason;
    this.#failHead(reason);
    // A body that arrived whole stays readable, as it would once queued in the stream.
    if (!this.#ended) {
      this.#rejectDirect(reason);
      this.#failBody(reason);
    }
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
    this.#headSettled = true;
    this.#resolveHead({ status: statusCode, statusText: statusMessage ?? '', headers });
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#received += chunk.length;
    if (this.#discarding || this.#streamDone) return;
    if (!this.#flowing) {
      // Held until someone reads; pausing bounds how much piles up meanwhile (a direct consumer
      // takes everything anyway).
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#direct === null && this.#pendingBytes > BODY_HIGH_WATER_MARK) controller.pause();
      return;
    }
    if (!this.#write(chunk)) controller.pause();
  }

  onResponseEnd(controller: DispatchController): void {
    this.#timings = controller.timings;
    this.#endedOk = true;
    this.#finish();
    const onEnded = this.#onEnded;
    this.#onEnded = null;
    onEnded?.(this.#timings, this.#received);
    if (this.#flowing) this.#end();
    else {
      this.#ended = true;
      if (this.#direct !== null) this.#settleDirect();
    }
  }

  onResponseError(_controller: DispatchController, error: Error): void {
    this.#finish();
    if (this.#aborted) return; // already settled with the signal's reason
    if (!this.#headSettled) return this.#failHead(fetchFailed(error));
    const err = new TypeError('terminated', { cause: error });
    if (this.#flowing) this.#failBody(err);
    else {
      this.#error = err;
      this.#rejectDirect(err);
    }
  }

  // --- after the head ---

  /** Calls `report` once the response has ended (at once if it has): its timings and body bytes. */
  onEnded(report: (timings: RequestTimings | undefined, received: number) => void): void {
    if (this.#endedOk) report(this.#timings, this.#received);
    else if (!this.#finished) this.#onEnded = report;
  }

  /** The response will not be read (a followed redirect, a null-body status): drop its bytes. */
  discard(): void {
    this.#discarding = true;
    this.#pending = [];
    this.#streamDone = true;
    if (this.#finished) this.#detach();
    else this.#controller?.resume();
  }

  /** The body's bytes will pass through `decoders`, in order, on their way to the stream. */
  decodeWith(decoders: Transform[]): void {
    this.#decoders = decoders;
  }

  /**
   * The body as a ReadableStream, made when first asked for (fetch-response.ts): on Node 20 each
   * web stream costs several µs and ~2 KB that only a full collection frees, and a body read with
   * arrayBuffer() / text() / json() never needs one.
   */
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => this.#start(controller),
        pull: () => this.#pull(),
        cancel: (reason) => this.#cancel(reason),
      },
      STREAM_STRATEGY,
    );
  }

  /**
   * Reads the whole body (decoded) before any Response exists, showing each chunk to `each`, and
   * then holds it as a body that has just arrived whole and is not yet read: the Response serves it
   * as usual (directly, or through a stream made on demand). The chunks are kept as they came, not
   * joined, so the body exists once. Rejects with the stream's error (an abort's reason, a decoding
   * or network error).
   */
  async readWhole(each: (chunk: Uint8Array) => void): Promise<void> {
    const reader = this.stream().getReader();
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      each(value);
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      length += value.byteLength;
    }
    // The stream that carried it is spent and the decoders have ended: start over as a handler
    // whose undecoded body ended before anything read it.
    this.#stream = null;
    this.#flowing = false;
    this.#streamDone = false;
    this.#decoders = [];
    this.#pending = chunks;
    this.#pendingBytes = length;
    this.#ended = true;
  }

  /**
   * True while the body's bytes can still be taken directly: nothing has read the stream, there
   * is nothing to decode, and no other consumer came first.
   */
  get direct(): boolean {
    return !this.#flowing && this.#direct === null && !this.#discarding && !this.#streamDone && this.#decoders.length === 0;
  }

  /** Takes the whole body, bypassing the stream (only while `direct`); settles at its end. */
  take(kind: DirectKind): Promise<unknown> {
    const direct: DirectConsumer = { kind, resolve: noop, reject: noop };
    const promise = new Promise((resolve, reject) => {
      direct.resolve = resolve;
      direct.reject = reject;
    });
    this.#direct = direct;
    if (this.#error !== undefined) this.#rejectDirect(this.#error);
    else if (this.#ended) this.#settleDirect();
    else if (this.#aborted) this.#rejectDirect(this.#abortReason);
    else this.#resumeDispatcher();
    return promise;
  }

  #settleDirect(): void {
    const direct = this.#direct!;
    const chunks = this.#pending;
    const length = this.#pendingBytes;
    this.#pending = [];
    this.#streamDone = true;
    this.#detach();
    let value: unknown;
    try {
      value = bodyValue(direct.kind, chunks, length);
    } catch (err) {
      direct.reject(err);
      return;
    }
    direct.resolve(value);
  }

  #rejectDirect(err: unknown): void {
    const direct = this.#direct;
    if (direct === null || this.#streamDone) return;
    this.#streamDone = true;
    this.#pending = [];
    this.#detach();
    direct.reject(err);
  }

  #start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#stream = controller;
    const decoders = this.#decoders;
    if (decoders.length === 0) {
      // Bytes wait for the first pull; an abort that came first still errors the stream.
      if (this.#aborted && !this.#ended) this.#failBody(this.#abortReason);
      return;
    }
    this.#flow();
  }

  /** From here on the stream carries the body: flush what waited, then what ended it. */
  #flow(): void {
    this.#flowing = true;
    const decoders = this.#decoders;
    const controller = this.#stream!;
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
        if ((controller.desiredSize ?? 0) <= -BODY_HIGH_WATER_MARK) last.pause();
      });
      last.on('end', () => this.#closeBody());
    }
    if (this.#aborted && !this.#ended) return this.#failBody(this.#abortReason);
    const pending = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    let wantMore = true;
    for (const chunk of pending) wantMore = this.#write(chunk);
    if (this.#error !== undefined) this.#failBody(this.#error);
    else if (this.#ended) this.#end();
    else if (wantMore) this.#resumeDispatcher();
  }

  #pull(): void {
    if (!this.#flowing) return this.#flow();
    const decoders = this.#decoders;
    if (decoders.length > 0) decoders[decoders.length - 1]!.resume();
    else this.#resumeDispatcher();
  }

  #cancel(reason: unknown): void {
    this.#streamDone = true;
    // Decoders hold engine-side state (a brotli window is megabytes): free it now, not at GC.
    for (const d of this.#decoders) d.destroy();
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
    return (stream.desiredSize ?? 0) > -BODY_HIGH_WATER_MARK;
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
    this.#signal?.removeEventListener('abort', this);
    this.#signalOwners = null;
  }
}
