// Turning a body's chunks into what the body mixins return: one decode, at most one copy; and a
// pushed chunk into the Buffer the body keeps.

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
  // Every byte is written below, so a large result skips the zero fill (allocUnsafeSlow's memory
  // is its own ArrayBuffer, never the Buffer pool). A small one asked for its buffer starts with
  // one, rather than V8 moving an on-heap array out later.
  const out =
    length > 1024
      ? new Uint8Array(Buffer.allocUnsafeSlow(length).buffer, 0, length)
      : ownBuffer
        ? new Uint8Array(new ArrayBuffer(length))
        : new Uint8Array(length);
  let offset = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** A pushed chunk as a Buffer: strings encoded, other byte views wrapped without a copy. */
export function toBuffer(chunk: Buffer | Uint8Array | string, encoding?: BufferEncoding): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, encoding);
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
