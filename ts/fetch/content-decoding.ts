// Content-Encoding decoding for fetch responses: the engine's decoders (ts/native/coding.ts, the
// same ones the decompress interceptor uses) as one streaming Transform. fetch decodes above the
// dispatcher (the dispatcher hands over the bytes as sent).
import { Transform, type TransformCallback } from 'node:stream';
import { createContentDecoder, type ContentDecoder } from '../native/coding.js';

/** Pushes decoded bytes only as fast as the reader takes them (a small input can inflate a lot). */
class EngineDecodeStream extends Transform {
  readonly #decoder: ContentDecoder;
  /** The transform / flush callback held while the reader is full. */
  #waiting: TransformCallback | null = null;

  constructor(decoder: ContentDecoder) {
    super();
    this.#decoder = decoder;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.#pump(() => this.#decoder.write(chunk), callback);
  }

  override _flush(callback: TransformCallback): void {
    this.#pump(() => this.#decoder.finish(), callback);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A body cancelled before its end: free the engine-side state now, not at some later GC.
    this.#decoder.release();
    callback(err);
  }

  override _read(size: number): void {
    const waiting = this.#waiting;
    if (waiting !== null) {
      this.#waiting = null;
      this.#pump(() => this.#decoder.read(), waiting);
      if (this.#waiting !== null) return; // pushed until full: the next _read goes on
    }
    // Transform's own _read releases the write callback it parks when a transform finishes with
    // its readable buffer at or past the high-water mark. Finishing the held transform just above
    // can park it, and Readable calls _read again only after a push, so release it now: otherwise
    // no more input is asked for and the body stalls. (Within a few MiB on Node 20, whose 16 KiB
    // mark is below one 64 KiB decoded step; rarer on Node 22+, whose mark is 64 KiB.)
    super._read(size);
  }

  #pump(first: () => Buffer | null, callback: TransformCallback): void {
    try {
      let out = first();
      while (out !== null) {
        if (!this.push(out)) {
          this.#waiting = callback;
          return;
        }
        out = this.#decoder.read();
      }
    } catch (err) {
      return callback(err as Error);
    }
    callback();
  }
}

/**
 * The decoders for a Content-Encoding value, in the order the bytes must pass through them: one
 * engine decoder undoing every coding, or none when nothing is to be decoded — including when a
 * coding is unknown, in which case the body is handed over as received. Lenient, as browsers are:
 * a stream cut short (with the HTTP body itself complete) ends the body with what was decoded.
 */
export function createDecoders(contentEncoding: string | null): Transform[] {
  if (contentEncoding === null) return [];
  const decoder = createContentDecoder(contentEncoding, { lenient: true });
  return decoder === null ? [] : [new EngineDecodeStream(decoder)];
}
