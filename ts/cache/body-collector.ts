// The Writable a store hands out for a response body: it gathers the chunks and commits them on
// finish; a body over the size limit fails the stream and is dropped whole, never truncated.
import { Writable } from 'node:stream';

export function bodyCollector(maxEntrySize: number, commit: (chunks: Buffer[], size: number) => void): Writable {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxEntrySize) {
        callback(new RangeError(`response body exceeds maxEntrySize (${maxEntrySize} bytes)`));
        return;
      }
      chunks.push(chunk);
      callback();
    },
    final(callback) {
      commit(chunks, size);
      callback();
    },
  });
}
