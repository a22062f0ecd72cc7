// Turning a body's chunks into what the body mixins return: one decode, at most one copy; and a
// pushed chunk into the Buffer the body keeps.

// Imported, not the global: Node's global `Buffer` is an accessor, read on every use.
import { Buffer } from 'node:buffer';

/** UTF-8 decode per the fetch spec (a leading BOM is dropped), or the encoding set on the stream. */
export function decodeText(chunks: Buffer[], length: number, encoding: BufferEncoding | null): string {
  if (length === 0) return '';
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  if (encoding === null || encoding === 'utf8' || encoding === 'utf-8') {
    if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      return buf.toString('utf8', 3);
    }
    // No-argument toString goes straight to the native UTF-8 slice.
    return buf.toString();
  }
  return buf.toString(encoding);
}

/**
 * Always a fresh copy: chunks may be views into larger shared buffers. `ownBuffer`: the result's
 * `.buffer` will be handed out, so make it a separate ArrayBuffer of exactly `length` bytes.
 */
export function concatBytes(chunks: Buffer[], length: number, ownBuffer = false): Uint8Array {
  if (ownBuffer) return new Uint8Array(concatArrayBuffer(chunks, length));
  // Every byte is written below, so a large result skips the zero fill (allocUnsafeSlow's memory
  // is its own ArrayBuffer, never the Buffer pool).
  const out = length > 1024 ? new Uint8Array(Buffer.allocUnsafeSlow(length).buffer, 0, length) : new Uint8Array(length);
  copyChunks(chunks, out);
  return out;
}

/**
 * The chunks copied into an ArrayBuffer of exactly `length` bytes, handed back as it is: reading
 * `.buffer` of a typed array is a call into V8's runtime. A small one starts as an ArrayBuffer
 * rather than an on-heap array V8 would move out when asked for its buffer.
 */
export function concatArrayBuffer(chunks: Buffer[], length: number): ArrayBuffer {
  const buffer = length > 1024 ? Buffer.allocUnsafeSlow(length).buffer : new ArrayBuffer(length);
  copyChunks(chunks, new Uint8Array(buffer, 0, length));
  return buffer as ArrayBuffer;
}

function copyChunks(chunks: Buffer[], out: Uint8Array): void {
  let offset = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    out.set(chunk, offset);
    offset += chunk.length;
  }
}

/** A pushed chunk as a Buffer: strings encoded, other byte views wrapped without a copy. */
export function toBuffer(chunk: Buffer | Uint8Array | string, encoding?: BufferEncoding): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, encoding);
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
