// The response body of `request()`: a stream.Readable that also carries the fetch body mixin
// (text/json/bytes/arrayBuffer/blob/body/bodyUsed) and `dump()`.
//
// The Readable machinery stays out of the way until someone uses the stream side: chunks the
// producer pushes are held in an array of our own ("detached"), and only a stream consumer ('data'
// or 'readable' listeners, read(), resume(), pipe(), async iteration, setEncoding, ...) moves them
// into the Readable's buffer ("attached"), after which it is a plain Readable. A mixin consumer
// (text/json/...) on a detached body takes the held chunks as they are, collects the rest straight
// from push(), decodes once when the producer pushes `null`, and only then ends the Readable so
// 'end' and 'close' still come in order. `await body.text()` on a small response is a handful of
// operations: no copy into the Readable's buffer, no 'data' events, no per-chunk promises.
//
// A 'data' or 'readable' listener added while a mixin consumer reads ("joins" it) gets the bytes
// too, as undici's does: from then on push() feeds both. undici's consumer starts a microtask after
// text(), so a listener added before that also sees what had arrived; here the consumer keeps the
// chunks it took ("replay") until that microtask and hands them to a listener that joins in time.

import { Readable } from 'node:stream';
import type { Blob } from 'node:buffer';
import { ReadableStream } from 'node:stream/web';
import { InvalidArgumentError, NotSupportedError, RequestAbortedError } from '../core/errors.js';
import { toBuffer } from './body-bytes.js';
import { type ConsumeKind, type Consumer, newConsumer, settleConsumer, settleDump } from './body-consumer.js';
import { microtask } from '../core/microtask.js';

/**
 * Where a body's bytes come from. `resume` and `abort` are called as methods of this object, so
 * a producer (e.g. a dispatch handler) can pass itself instead of allocating closures.
 */
export interface BodyReadableOptions {
  /** The consumer wants more: undo a previous pause of the producer. Called often; keep it cheap. */
  resume: () => void;
  /**
   * The body was destroyed with `err` (a RequestAbortedError when the user destroyed it without
   * one). May come after the producer already finished; a finished producer ignores it.
   */
  abort: (err: Error) => void;
  /** Called once when the body is torn down, whatever the reason (end, error, user destroy). */
  onDestroy?: () => void;
  contentType?: string;
  contentLength?: number | null;
  highWaterMark?: number;
}

export interface BodyDumpOptions {
  /** Bytes to read and discard before giving up on the body; default 131072. */
  limit?: number;
  signal?: AbortSignal;
}

const DEFAULT_DUMP_LIMIT = 128 * 1024;
const DEFAULT_HIGH_WATER_MARK = 64 * 1024;
/** The Readable's options for the default high-water mark: one object for every body (Readable only reads it). */
const DEFAULT_READABLE_OPTIONS = Object.freeze({ highWaterMark: DEFAULT_HIGH_WATER_MARK });

function noop(): void {}

/** Closes a body's replay window: one function for every body, so the microtask needs no closure. */
let closeReplay: (body: BodyReadable) => void;

function unusableError(): TypeError {
  return new TypeError('Body is unusable: it has already been read or is locked');
}

export class BodyReadable extends Readable {
  readonly #src: BodyReadableOptions;
  readonly #contentType: string;
  readonly #contentLength: number | null;
  #bytesRead = 0;
  /** The producer pushed null: every byte of the body has arrived. */
  #complete = false;
  #consumer: Consumer | null = null;
  /** Chunks pushed while detached; null once attached or taken by a consumer. */
  #held: Buffer[] | null = [];
  #heldLength = 0;
  /** The Readable's own buffer is in use (see the top of this file). */
  #attached = false;
  /** A mixin consumer reading through 'data' events (see #consumeFlowing). */
  #flowing = false;
  #web: ReadableStream<Uint8Array> | null = null;
  /** Every chunk so far came through `pushChunk` as the body's alone (see `#wholeBuffer`). */
  #exclusive = true;
  /** A stream reader joined the mixin consumer: push() feeds the Readable too. */
  #mirror = false;
  /** The chunks a detached consumer started with, until the microtask after it started. */
  #replay: Buffer[] | null = null;
  /** The end was pushed into the Readable's buffer. */
  #eof = false;

  static {
    closeReplay = (body) => body.#closeReplay();
    for (const name of ['on', 'addListener', 'prependListener'] as const) {
      const base = Readable.prototype[name] as (this: Readable, event: string | symbol, listener: (...args: unknown[]) => void) => Readable;
      const method = function (this: BodyReadable, event: string | symbol, listener: (...args: unknown[]) => void): Readable {
        if (event === 'data' || event === 'readable') {
          if (!this.#attached) this.#attach();
          const consumer = this.#consumer;
          if (consumer !== null && consumer.kind !== 'dump' && !this.#mirror) this.#join();
        }
        return base.call(this, event, listener);
      };
      Object.defineProperty(BodyReadable.prototype, name, { value: method, writable: true, configurable: true });
    }
    // A detached body's held bytes count as buffered, as they would in any Readable. (@types/node
    // declares readableLength a property, so the accessor is installed by hand.)
    const base = Object.getOwnPropertyDescriptor(Readable.prototype, 'readableLength')!.get!;
    Object.defineProperty(BodyReadable.prototype, 'readableLength', {
      get(this: BodyReadable): number {
        return (base.call(this) as number) + (this.#held === null ? 0 : this.#heldLength);
      },
      configurable: true,
    });
  }

  /**
   * `contentType` / `contentLength` override the options' own: request() passes its response's
   * here rather than keep them on a handler that lives as long as the request.
   */
  constructor(opts: BodyReadableOptions, contentType = opts.contentType, contentLength = opts.contentLength) {
    super(opts.highWaterMark == null ? DEFAULT_READABLE_OPTIONS : { highWaterMark: opts.highWaterMark });
    this.#src = opts;
    this.#contentType = contentType ?? '';
    this.#contentLength = typeof contentLength === 'number' && Number.isFinite(contentLength) ? contentLength : null;
  }

  override _read(): void {
    this.#src.resume();
  }

  /**
   * Nobody reads the body yet (no stream reader, no consumer): what the producer pushes is only
   * held, which runs no listener and schedules nothing, so it needs no async context of its own.
   */
  get holding(): boolean {
    return this.#held !== null && this.#consumer === null;
  }

  /**
   * A producer's chunk. `exclusive`: no one else holds it, so a body read whole may hand out its
   * memory rather than a copy.
   */
  pushChunk(chunk: Buffer, exclusive: boolean): boolean {
    const before = this.#exclusive;
    const more = this.push(chunk);
    this.#exclusive = before && exclusive;
    return more;
  }

  override push(chunk: Buffer | Uint8Array | string | null, encoding?: BufferEncoding): boolean {
    // Any chunk not vouched for by pushChunk (which restores the flag after) may be shared.
    if (chunk !== null) this.#exclusive = false;
    if (chunk === null) {
      this.#complete = true;
      const consumer = this.#consumer;
      if (consumer !== null && consumer.chunks !== null) this.#settle(consumer);
      if (this.#attached) return this.#pushEof();
      // Detached: the Readable ends once someone reads it, or for a consumer right away (after
      // its replay window, which may still hand the chunks to a listener).
      if (consumer !== null && this.#replay === null) this.#endReadable();
      return false;
    }
    const consumer = this.#consumer;
    if (consumer !== null) {
      const buf = toBuffer(chunk, encoding);
      this.#bytesRead += buf.length;
      if (consumer.kind === 'dump' && this.#bytesRead > consumer.length) this.destroy();
      if (consumer.chunks === null) return !this.destroyed;
      consumer.chunks.push(buf);
      consumer.length += buf.length;
      // The consumer buffers everything anyway; only a joined reader may ask the producer to pause.
      return this.#mirror ? super.push(buf) : true;
    }
    const held = this.#held;
    if (held !== null) {
      if (this.destroyed) return false;
      const buf = toBuffer(chunk, encoding);
      this.#bytesRead += buf.length;
      // Sized for the one chunk most bodies are (an empty array's first push makes room for 17).
      if (held.length === 0) this.#held = [buf];
      else held.push(buf);
      this.#heldLength += buf.length;
      // Past the high-water mark the producer pauses until a consumer or a reader arrives.
      return this.#heldLength <= this.readableHighWaterMark;
    }
    this.#bytesRead += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.length;
    return super.push(chunk, encoding);
  }

  /** Hands the held chunks (and the end) to the Readable: someone uses the stream side now. */
  #attach(): void {
    if (this.#attached) return;
    this.#attached = true;
    const held = this.#held;
    if (held === null) return;
    this.#held = null;
    this.#heldLength = 0;
    for (let i = 0; i < held.length; i++) super.push(held[i]);
    if (this.#complete && this.#consumer === null) this.#pushEof();
  }

  /** A stream reader arrived while a mixin consumer reads: both get the bytes from now on. */
  #join(): void {
    this.#mirror = true;
    this.#attached = true;
    const replay = this.#replay;
    this.#replay = null;
    if (this.#eof) return;
    // Copies: a consumer that already settled may have handed out a chunk's memory as its result.
    if (replay !== null) for (let i = 0; i < replay.length; i++) super.push(Buffer.from(replay[i]!));
    if (this.#complete) this.#pushEof();
  }

  /** Starts the window in which a joining listener still gets the consumer's first chunks. */
  #openReplay(chunks: Buffer[]): void {
    this.#replay = chunks;
    microtask(closeReplay, this);
  }

  /** The microtask after a detached consumer started. */
  #closeReplay(): void {
    this.#replay = null;
    // The end was held back for a listener that did not come.
    if (this.#complete && !this.#eof && !this.destroyed) this.#endReadable();
  }

  #pushEof(): boolean {
    this.#eof = true;
    return super.push(null);
  }

  /** Ends the Readable of a body a mixin consumer read whole, so 'end' then 'close' follow. */
  #endReadable(): void {
    this.#pushEof();
    super.read(0);
  }

  // Every way into the Readable's buffer attaches first: the methods below, and 'data' /
  // 'readable' listeners (installed in the static block, so the listener methods keep Readable's
  // typed overloads). 'end', 'close', 'error' listeners don't read; they leave a body detached.
  override read(size?: number): any {
    if (!this.#attached) this.#attach();
    return super.read(size);
  }

  override resume(): this {
    if (!this.#attached) this.#attach();
    return super.resume();
  }

  override pause(): this {
    if (!this.#attached) this.#attach();
    return super.pause();
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    if (!this.#attached) this.#attach();
    return super.pipe(destination, options);
  }

  override unshift(chunk: any, encoding?: BufferEncoding): void {
    if (!this.#attached) this.#attach();
    super.unshift(chunk, encoding);
  }

  override setEncoding(encoding: BufferEncoding): this {
    if (!this.#attached) this.#attach();
    return super.setEncoding(encoding);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Every byte already handed to a mixin consumer counts as a complete read.
    const finished = this.readableEnded || (this.#complete && this.#consumer !== null);
    if (err === null && !finished) err = new RequestAbortedError();
    const consumer = this.#consumer;
    if (consumer !== null && consumer.kind === 'dump') {
      settleDump(consumer);
    } else if (err !== null && consumer !== null && consumer.chunks !== null) {
      consumer.chunks = null;
      consumer.reject(err);
    }
    if (err !== null) this.#src.abort(err);
    this.#src.onDestroy?.();
    // Destroyed before anyone listened (e.g. in the tick the body was handed out): give the user
    // a turn to attach an 'error' listener before it is emitted.
    if (err !== null && this.listenerCount('error') === 0) {
      setImmediate(callback, err);
    } else {
      callback(err);
    }
  }

  /**
   * For a body no one has started reading (no consumer, no stream reader): how many bytes of it
   * are still to arrive, or null when unknown. false once someone reads it or it is torn down.
   */
  unreadRemainder(): number | null | false {
    if (this.#consumer !== null || this.#attached || this.#flowing || this.destroyed) return false;
    return this.#contentLength === null ? null : this.#contentLength - this.#bytesRead;
  }

  text(): Promise<string> {
    return this.#consume('text') as Promise<string>;
  }

  json(): Promise<unknown> {
    return this.#consume('json');
  }

  bytes(): Promise<Uint8Array> {
    return this.#consume('bytes') as Promise<Uint8Array>;
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#consume('arrayBuffer') as Promise<ArrayBuffer>;
  }

  blob(): Promise<Blob> {
    return this.#consume('blob') as Promise<Blob>;
  }

  formData(): Promise<never> {
    return Promise.reject(new NotSupportedError('formData() is not supported on a response body'));
  }

  /** True once the body has been read from, consumed, or torn down before its end. */
  get bodyUsed(): boolean {
    return this.#consumer !== null || this.#flowing || this.readableDidRead || this.readableAborted;
  }

  /** A web ReadableStream view of the same bytes, created on first access. */
  get body(): ReadableStream<Uint8Array> {
    let web = this.#web;
    if (web === null) {
      web = ReadableStream.from<Uint8Array>(this);
      // Already taken by a mixin consumer: hand out a stream that is locked, as fetch does.
      if (this.#consumer !== null) web.getReader();
      this.#web = web;
    }
    return web;
  }

  /**
   * Reads and discards the body so the connection can be reused. If more than `limit` bytes
   * arrive (or content-length announces more), the body is destroyed instead, which aborts the
   * request. Resolves (with undefined, as undici's types say) either way; rejects only when `signal`
   * aborts.
   */
  dump(opts?: BodyDumpOptions): Promise<void> {
    const signal = opts?.signal;
    if (signal != null && (typeof signal !== 'object' || !('aborted' in signal))) {
      return Promise.reject(new InvalidArgumentError('signal must be an AbortSignal'));
    }
    const rawLimit = opts?.limit;
    const limit = rawLimit && Number.isFinite(rawLimit) ? rawLimit : DEFAULT_DUMP_LIMIT;
    if (signal?.aborted) {
      return Promise.reject(signal.reason ?? new RequestAbortedError());
    }
    if (this.closed) return Promise.resolve();
    if (
      this.#consumer === null &&
      !this.destroyed &&
      this.listenerCount('data') === 0 &&
      this.listenerCount('readable') === 0
    ) {
      return this.#dumpInPush(limit, signal ?? null);
    }

    // Someone else is reading (or the body is already being torn down): discard alongside them
    // and settle on 'close'.
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.destroy(signal?.reason ?? new RequestAbortedError());
      };
      if (signal != null) signal.addEventListener('abort', onAbort, { once: true });
      this.on('close', () => {
        if (signal != null) {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) {
            reject(signal.reason ?? new RequestAbortedError());
            return;
          }
        }
        resolve();
      });
      this.on('error', noop);

      if ((this.#contentLength !== null && this.#contentLength > limit) || this.#bytesRead > limit) {
        this.destroy();
        return;
      }
      this.on('data', () => {
        if (this.#bytesRead > limit) this.destroy();
      });
      this.resume();
    });
  }

  /** dump() with nobody else reading: bytes are discarded inside push(), settled in _destroy. */
  #dumpInPush(limit: number, signal: AbortSignal | null): Promise<void> {
    this.on('error', noop);
    const consumer = this.#install('dump', null, limit);
    consumer.signal = signal;
    if (signal !== null) {
      consumer.onAbort = () => {
        this.destroy(signal.reason ?? new RequestAbortedError());
      };
      signal.addEventListener('abort', consumer.onAbort, { once: true });
    }
    const promise = consumer.promise as Promise<void>;
    if ((this.#contentLength !== null && this.#contentLength > limit) || this.#bytesRead > limit) {
      this.destroy();
      return promise;
    }
    if (this.#attached) {
      // Discard what is buffered; reaching the end here schedules 'end' and the teardown.
      while (super.read() !== null) {
        // discard
      }
      if (!this.#complete && !this.destroyed) super.resume();
      return promise;
    }
    this.#held = null;
    this.#heldLength = 0;
    if (this.#complete) this.#endReadable();
    else this.#src.resume();
    return promise;
  }

  #consume(kind: ConsumeKind): Promise<unknown> {
    if (
      this.#consumer !== null ||
      this.#flowing ||
      (this.#web !== null && this.#web.locked) ||
      this.readableDidRead ||
      this.readableAborted
    ) {
      return this.#rejectUnusable();
    }

    // Failures reach the consumer through _destroy; don't let them also surface as an
    // unhandled 'error' event.
    this.on('error', noop);

    const held = this.#held;
    if (held !== null) {
      // Detached: the consumer takes the producer's chunks as they are.
      this.#held = null;
      const consumer = this.#install(kind, held, this.#heldLength);
      this.#heldLength = 0;
      this.#openReplay(held);
      if (this.#complete) {
        // The Readable ends when the replay window closes.
        this.#settle(consumer);
      } else if (this.destroyed) {
        consumer.chunks = null;
        consumer.reject(this.errored ?? new RequestAbortedError());
      } else {
        // The producer may have paused on a full hold.
        this.#src.resume();
      }
      return consumer.promise;
    }

    if (this.readableEncoding !== null || this.listenerCount('data') > 0) return this.#consumeFlowing(kind);

    // Attached: take whatever the Readable buffered before the consumer arrived. The consumer is
    // installed only afterwards: read() may call _read(), and a producer that pushes synchronously
    // from resume() must land behind the buffered bytes, not ahead of them.
    const chunks: Buffer[] = [];
    let length = 0;
    let chunk: Buffer | string | null;
    while ((chunk = super.read() as Buffer | string | null) !== null) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, this.readableEncoding ?? 'utf8') : chunk;
      chunks.push(buf);
      length += buf.length;
    }

    const consumer = this.#install(kind, chunks, length);
    if (this.#complete) {
      // The drain above already read to the end, which schedules 'end' and the teardown.
      this.#settle(consumer);
    } else if (this.destroyed) {
      // Torn down while draining; _destroy ran before the consumer was installed.
      consumer.chunks = null;
      consumer.reject(this.errored ?? new RequestAbortedError());
    } else {
      // Flowing from here on, so 'end' (and autoDestroy's 'close') follow the producer's end;
      // this also resumes a paused producer.
      super.resume();
    }
    return consumer.promise;
  }

  /** Makes `kind` this body's consumer: push() feeds it from now on. */
  #install(kind: ConsumeKind, chunks: Buffer[] | null, length: number): Consumer {
    const consumer = newConsumer(kind, chunks, length);
    this.#consumer = consumer;
    return consumer;
  }

  /**
   * The consumer for a body someone else also reads ('data' listeners) or decodes (setEncoding):
   * it reads through 'data' events like any listener, so the others stay fed and the decoder
   * hands out whole characters.
   */
  #consumeFlowing(kind: ConsumeKind): Promise<unknown> {
    this.#flowing = true;
    const consumer = newConsumer(kind, [], 0);
    const encoding = this.readableEncoding ?? 'utf8';
    this.on('data', (chunk: Buffer | string) => {
      if (consumer.chunks === null) return;
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
      consumer.chunks.push(buf);
      consumer.length += buf.length;
    });
    this.once('end', () => {
      if (consumer.chunks !== null) this.#settle(consumer);
    });
    this.once('close', () => {
      if (consumer.chunks === null) return;
      consumer.chunks = null;
      consumer.reject(this.errored ?? new RequestAbortedError());
    });
    this.resume();
    return consumer.promise;
  }

  #rejectUnusable(): Promise<never> {
    // Torn down but 'close' not yet emitted: the error may still be on its way.
    if (this.destroyed && !this.closed) {
      return new Promise<never>((_resolve, reject) => {
        this.on('error', noop);
        this.once('close', () => reject(this.errored ?? unusableError()));
      });
    }
    return Promise.reject(this.errored ?? unusableError());
  }

  /**
   * The body's memory as it is, when one chunk holds all of it, spans its whole ArrayBuffer (the
   * engine gives large bodies a Buffer of their own) and was never seen by anyone else: handing
   * it out saves copying every byte once more. Otherwise null, and the caller copies.
   */
  #wholeBuffer(chunks: Buffer[]): ArrayBuffer | null {
    if (chunks.length !== 1 || !this.#exclusive || this.#attached || this.#flowing) return null;
    const chunk = chunks[0]!;
    // The offset first: a chunk that is a view into an event batch (a small body) is told apart
    // without `.buffer`, a call into V8's runtime.
    if (chunk.byteOffset !== 0) return null;
    const buffer = chunk.buffer;
    if (chunk.byteLength !== buffer.byteLength || !(buffer instanceof ArrayBuffer)) return null;
    return buffer;
  }

  #settle(consumer: Consumer): void {
    const kind = consumer.kind;
    const whole = kind === 'bytes' || kind === 'arrayBuffer' ? this.#wholeBuffer(consumer.chunks!) : null;
    settleConsumer(consumer, this.readableEncoding, this.#contentType, whole);
  }
}
