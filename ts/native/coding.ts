// The engine's content decoders (crates/engine/src/coding) as JS sees them: one synchronous call
// per chunk, buffers in and out, errors mapped to typed errors. Used by the decompress interceptor
// and by fetch: the one implementation of content decoding.
import { binding, type NativeDecoder } from './binding.js';
import { ResponseExceededMaxSizeError } from '../core/errors.js';

/**
 * A body that cannot be decoded. `code` follows Node's zlib (what undici users see from it):
 * `Z_DATA_ERROR` for bytes that are not a valid stream, `Z_BUF_ERROR` for a stream cut short;
 * `ERR_TOO_MANY_CODINGS` for more than five codings in one `content-encoding`.
 */
export class ContentDecodingError extends Error {
  readonly code: 'Z_DATA_ERROR' | 'Z_BUF_ERROR' | 'ERR_TOO_MANY_CODINGS';
  constructor(message: string, code: ContentDecodingError['code']) {
    super(message);
    this.name = 'ContentDecodingError';
    this.code = code;
  }
}

function typed(err: unknown): Error {
  const { code, message } = err as { code?: string; message: string };
  switch (code) {
    case 'DECODE_CORRUPT':
      return new ContentDecodingError(message, 'Z_DATA_ERROR');
    case 'DECODE_TRUNCATED':
      return new ContentDecodingError(message, 'Z_BUF_ERROR');
    case 'DECODE_TOO_LARGE':
      return new ResponseExceededMaxSizeError(message);
    case 'DECODE_TOO_MANY_CODINGS':
      return new ContentDecodingError(message, 'ERR_TOO_MANY_CODINGS');
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}

/** Most bytes one call returns (the engine's `decode::STEP`). */
const STEP = 64 * 1024;

/**
 * Every method throws a typed error (see `typed`) instead of the binding's raw one. Decoded bytes
 * are written into buffers allocated here, by V8: its GC counts them (an engine-allocated buffer
 * is memory V8 neither sees nor frees promptly, and 1 MiB bodies turned that into hundreds of MB).
 */
export class ContentDecoder {
  readonly #native: NativeDecoder;
  /** Where the next output goes: a full buffer leaves as it is, a short result is copied out. */
  #scratch: Buffer | null = null;

  constructor(native: NativeDecoder) {
    this.#native = native;
  }

  /** Feeds compressed bytes; returns the first decoded ones. Call `read` until null after. */
  write(chunk: Buffer): Buffer | null {
    try {
      this.#native.push(chunk);
    } catch (err) {
      throw typed(err);
    }
    return this.read();
  }

  /** The next decoded bytes (at most 64 KiB), or null until more input (or, after `finish`, done). */
  read(): Buffer | null {
    const out = this.#scratch ?? Buffer.allocUnsafeSlow(STEP);
    let n: number;
    try {
      n = this.#native.readInto(out);
    } catch (err) {
      throw typed(err);
    }
    if (n === 0) {
      this.#scratch = out;
      return null;
    }
    // Half full or more: hand the buffer over (at most 2x its content). Less: copy the bytes out
    // and keep the buffer for the next call.
    if (n >= STEP / 2) {
      this.#scratch = null;
      return out.subarray(0, n);
    }
    this.#scratch = out;
    return Buffer.from(out.subarray(0, n));
  }

  /** Frees the engine-side state now (a brotli window is up to 16 MiB): for a body abandoned before
   * its end. After the end or an error the engine has already freed it. */
  release(): void {
    this.#scratch = null;
    this.#native.release();
  }

  /** Ends the input: returns what is left (then `read` until null); throws if the stream was cut short. */
  finish(): Buffer | null {
    this.#native.end();
    return this.read();
  }
}

export interface ContentDecoderOptions {
  /** Most decoded bytes (per coding stage); 0: no limit. */
  maxSize?: number;
  /** A stream cut short ends the body instead of failing it (fetch, as browsers do). */
  lenient?: boolean;
}

/**
 * A decoder for a `content-encoding` value (names case-insensitive, several codings undone in
 * reverse order), or null when there is nothing to decode or a coding is unknown: the body then
 * passes as it is. Throws ContentDecodingError for more than five codings.
 */
export function createContentDecoder(contentEncoding: string, opts: ContentDecoderOptions = {}): ContentDecoder | null {
  let native: NativeDecoder | null;
  try {
    native = binding.createDecoder(contentEncoding, opts.maxSize ?? 0, opts.lenient ?? false);
  } catch (err) {
    throw typed(err);
  }
  return native === null ? null : new ContentDecoder(native);
}
