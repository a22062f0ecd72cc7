// A caller's stream body read the way undici reads one: by its 'data' events, resumed to start
// (a legacy stream such as form-data's CombinedStream only flows once resumed) and paused while
// the engine is full. It is watched for the whole life of the request:
// - an 'error', even one after the last chunk was read, fails the request (a late error counts);
// - at its 'end' a stream that does not destroy itself is destroyed;
// - a 'close' before its 'end' aborts the request (RequestAbortedError).
// When the request settles the stream is let go: destroyed with the error if the request failed
// (a node:http IncomingMessage without its socket);
// if the response completed before the body was read, it is paused, our listeners are removed,
// and it is left to its owner (a proxy's incoming request stays usable: its socket is the proxy's);
// chunks read ahead and not yet sent (HIGH_WATER at most) are not given back.
import { nodeHttp } from '../../core/node-http.js';
import { RequestAbortedError } from '../../core/errors.js';
import type { EventStream } from '../../core/request-body.js';

/** Chunks read ahead of the engine (counted in bytes or string units) before the stream is paused. */
const HIGH_WATER = 64 * 1024;

function noop(): void {}

const sizeOf = (chunk: unknown): number =>
  typeof chunk === 'string' ? chunk.length : ArrayBuffer.isView(chunk) ? chunk.byteLength : 1;

/** What a node:stream Readable records of the events it has sent. */
interface PastEvents {
  errorEmitted?: boolean;
  errored?: Error | null;
  endEmitted?: boolean;
  closeEmitted?: boolean;
}

/** Node's Readable destroys itself at its end (autoDestroy); other streams are destroyed for it. */
function destroysItself(s: EventStream): boolean {
  return (s as { _readableState?: { autoDestroy?: boolean } })._readableState?.autoDestroy === true;
}

export class StreamReader implements AsyncIterator<unknown> {
  readonly #stream: EventStream;
  /** Told of an error that arrives once the body was read (a late error). */
  #onError: (err: Error) => void;
  #queue: unknown[] = [];
  #queued = 0;
  /** All the stream's data is in: its 'end' came, or it had ended before the request began. */
  #complete: boolean;
  #error: Error | null = null;
  #waiter: (() => void) | null = null;
  #flowing = false;
  /** Paused here because the queue is full (resumed as it empties). */
  #held = false;
  #released = false;

  /** `complete`: the stream's content was already taken (core/request-body.ts); it is only watched. */
  constructor(stream: EventStream, onError: (err: Error) => void, complete = false) {
    this.#stream = stream;
    this.#onError = onError;
    this.#complete = complete;
    stream.on('error', this.#handleError);
    stream.on('end', this.#handleEnd);
    stream.on('close', this.#handleClose);
    // Events it sent before it was handed over will not come again (undici checks the same).
    const past = (stream as { _readableState?: PastEvents })._readableState;
    if (past?.errorEmitted === true) this.#error = past.errored ?? new RequestAbortedError();
    else if (past?.endEmitted === true) this.#complete = true;
    else if (past?.closeEmitted === true) this.#error = new RequestAbortedError();
  }

  next(): Promise<IteratorResult<unknown>> {
    if (!this.#flowing && !this.#complete && !this.#released) {
      this.#flowing = true;
      this.#stream.on('data', this.#handleData);
      // undici resumes it too: a stream paused by its owner, or a legacy one, starts here.
      this.#stream.resume?.();
    }
    // A chunk already queued needs no waiting.
    if (this.#queue.length > 0) return Promise.resolve({ done: false, value: this.#take() });
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        if (this.#queue.length > 0) resolve({ done: false, value: this.#take() });
        else if (this.#error !== null) reject(this.#error);
        else if (this.#complete || this.#released) resolve({ done: true, value: undefined });
        else this.#waiter = settle;
      };
      settle();
    });
  }

  /** The request settled: let the stream go (see the head of this file). */
  release(err: Error | null): void {
    if (this.#released) return;
    this.#released = true;
    const s = this.#stream;
    if (this.#flowing) {
      // Paused before the 'data' listener goes: a flowing Readable would drop what it emits next.
      if (!this.#complete) s.pause?.();
      s.removeListener('data', this.#handleData);
    }
    s.removeListener('end', this.#handleEnd);
    s.removeListener('close', this.#handleClose);
    if (err !== null) {
      // An error the stream has yet to emit (or will on its destroy) must not go unheard.
      s.on('error', noop);
      if (s.destroyed !== true && typeof s.destroy === 'function') {
        // An unfinished IncomingMessage destroys its socket with it, and that socket is its
        // server's: detached first (as undici does, nodejs/node#38505), a proxy can still answer.
        if (s instanceof nodeHttp.IncomingMessage) (s as { socket: unknown }).socket = null;
        s.destroy(err);
      }
    }
    s.removeListener('error', this.#handleError);
    this.#queue = [];
    this.#wake();
  }

  #take(): unknown {
    const value = this.#queue.shift();
    this.#queued -= sizeOf(value);
    if (this.#held && this.#queued < HIGH_WATER) {
      this.#held = false;
      this.#stream.resume?.();
    }
    return value;
  }

  #wake(): void {
    const w = this.#waiter;
    this.#waiter = null;
    w?.();
  }

  #fail(err: Error): void {
    if (this.#error !== null || this.#released) return;
    this.#error = err;
    if (this.#waiter !== null) this.#wake();
    // While the body is still read, the reader meets the error after the chunks that came before
    // it (they are sent, as undici writes each as it comes); once all was read it is told here.
    else if (this.#complete) this.#onError(err);
  }

  readonly #handleData = (chunk: unknown): void => {
    if (this.#released) return;
    this.#queue.push(chunk);
    this.#queued += sizeOf(chunk);
    if (this.#queued >= HIGH_WATER && !this.#held) {
      this.#held = true;
      this.#stream.pause?.();
    }
    this.#wake();
  };

  readonly #handleEnd = (): void => {
    this.#complete = true;
    this.#wake();
    if (!destroysItself(this.#stream) && this.#stream.destroyed !== true) this.#stream.destroy?.();
  };

  readonly #handleError = (err: Error): void => {
    this.#fail(err);
  };

  readonly #handleClose = (): void => {
    // A broken stream may say 'close' before its 'error': that error wins if it comes.
    queueMicrotask(() => {
      if (!this.#complete) this.#fail(new RequestAbortedError());
    });
  };
}
