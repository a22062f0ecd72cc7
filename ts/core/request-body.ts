// Every request-body form a caller may pass, turned into what the engine takes: bytes, or a
// source streamed chunk by chunk, plus the content-type and length the form implies.
import { Readable } from 'node:stream';
import { InvalidArgumentError } from './errors.js';

/** A body sent chunk by chunk (ts/dispatcher/engine/body-pump.ts feeds it to the engine). */
export type StreamBody = Readable | AsyncIterable<unknown> | Iterable<unknown>;

export function isStreamBody(b: unknown): b is StreamBody {
  return (
    b instanceof Readable ||
    (typeof b === 'object' && b !== null &&
      (typeof (b as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
        typeof (b as Iterable<unknown>)[Symbol.iterator] === 'function'))
  );
}

export interface RequestBodyParts {
  bytes: Buffer | null;
  stream: StreamBody | null;
  /** Sent as content-type unless the caller set one. */
  contentType: string | null;
  /** A streamed body's size when the form knows it (a Blob). */
  length: number | null;
}

const parts = (bytes: Buffer | null, stream: StreamBody | null = null, contentType: string | null = null, length: number | null = null): RequestBodyParts => ({
  bytes,
  stream,
  contentType,
  length,
});

export function requestBodyParts(body: unknown): RequestBodyParts {
  if (body == null) return parts(null);
  if (typeof body === 'string') return parts(Buffer.from(body));
  if (Buffer.isBuffer(body)) return parts(body);
  // Any view (typed arrays, DataView): the bytes it covers, not the whole ArrayBuffer.
  if (ArrayBuffer.isView(body)) return parts(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  if (body instanceof ArrayBuffer || body instanceof SharedArrayBuffer) return parts(Buffer.from(body));
  if (body instanceof URLSearchParams) {
    return parts(Buffer.from(body.toString()), null, 'application/x-www-form-urlencoded;charset=UTF-8');
  }
  if (body instanceof Blob) {
    return parts(null, body.stream() as unknown as AsyncIterable<Uint8Array>, body.type || null, body.size);
  }
  if (body instanceof FormData) {
    // The platform's own multipart encoder: it picks the boundary and says so in the content-type.
    const encoded = new Response(body);
    return parts(null, encoded.body as unknown as AsyncIterable<Uint8Array>, encoded.headers.get('content-type'));
  }
  if (isStreamBody(body)) return parts(null, body);
  throw new InvalidArgumentError('body must be a string, a Buffer, a Readable stream or an iterable');
}
