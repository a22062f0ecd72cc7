// Content-Encoding decoding for fetch responses, as streaming node:zlib transforms. fetch decodes
// above the dispatcher (the dispatcher hands over the bytes as sent).
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

// Lenient flushing: servers often end gzip / deflate bodies without the final block, and
// browsers accept that, so a truncated stream yields what it decoded instead of an error.
const LENIENT = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };

/**
 * `deflate` is zlib-wrapped per RFC 9110, but some servers send raw deflate. The first byte tells
 * them apart (a zlib header's low nibble is 8, the deflate method), so the inner decoder is picked
 * on the first chunk.
 */
class DeflateDecoder extends Transform {
  #inner: Transform | null = null;
  #pendingCallback: TransformCallback | null = null;

  #open(first: number): Transform {
    const inner = (first & 0x0f) === 0x08 ? zlib.createInflate(LENIENT) : zlib.createInflateRaw(LENIENT);
    inner.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) inner.pause();
    });
    inner.on('error', (err) => this.destroy(err));
    inner.on('end', () => {
      this.#pendingCallback?.();
      this.#pendingCallback = null;
    });
    this.#inner = inner;
    return inner;
  }

  override _read(size: number): void {
    this.#inner?.resume();
    super._read(size);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    if (chunk.length === 0) return callback();
    const inner = this.#inner ?? this.#open(chunk[0]!);
    if (inner.write(chunk)) callback();
    else inner.once('drain', () => callback());
  }

  override _flush(callback: TransformCallback): void {
    if (this.#inner === null) return callback();
    this.#pendingCallback = callback;
    this.#inner.end();
  }

  override _destroy(err: Error | null, callback: (error: Error | null) => void): void {
    this.#inner?.destroy();
    callback(err);
  }
}

function decoderFor(coding: string): Transform | null {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(LENIENT);
    case 'deflate':
      return new DeflateDecoder();
    case 'br':
      return zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      return null;
  }
}

/**
 * The decoders for a Content-Encoding value, in the order the bytes must pass through them (the
 * reverse of the order the codings were applied). Empty when nothing is to be decoded — including
 * when any coding is unknown, in which case the body is handed over as received.
 */
export function createDecoders(contentEncoding: string | null): Transform[] {
  if (contentEncoding === null) return [];
  const codings = contentEncoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const decoders: Transform[] = [];
  for (let i = codings.length - 1; i >= 0; i--) {
    const decoder = decoderFor(codings[i]!);
    if (decoder === null) {
      for (const d of decoders) d.destroy();
      return [];
    }
    decoders.push(decoder);
  }
  return decoders;
}
