// Every request-body form a caller may pass, turned into what the engine takes: bytes, or a
// source streamed chunk by chunk, plus the content-type and length the form implies.
import { Readable } from 'node:stream';
import { InvalidArgumentError } from './errors.js';

/**
 * What undici counts as a stream: any object with pipe() and on(). Beside node:stream that is
 * readable-stream@2, form-data (a CombinedStream), into-stream: streams read by their events.
 */
export interface EventStream {
  pipe(...args: never[]): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  pause?(): unknown;
  resume?(): unknown;
  destroy?(err?: Error): unknown;
  destroyed?: boolean;
}

/** A body sent chunk by chunk (ts/dispatcher/engine/body-pump.ts feeds it to the engine). */
export type StreamBody = EventStream | AsyncIterable<unknown> | Iterable<unknown>;

export function isEventStream(b: unknown): b is EventStream {
  return (
    b instanceof Readable ||
    (typeof b === 'object' && b !== null &&
      typeof (b as EventStream).pipe === 'function' && typeof (b as EventStream).on === 'function')
  );
}

function isStreamBody(b: unknown): b is StreamBody {
  return (
    isEventStream(b) ||
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
  /**
   * The caller's stream when its whole content was already buffered in it (it had ended): sent
   * as `bytes`, and still watched for the request's life (a late 'error', its 'end').
   */
  ended: EventStream | null;
}

const parts = (bytes: Buffer | null, stream: StreamBody | null = null, contentType: string | null = null, length: number | null = null): RequestBodyParts => ({
  bytes,
  stream,
  contentType,
  length,
  ended: null,
});

interface BufferedState {
  objectMode?: boolean;
  ended?: boolean;
  length?: number;
}

/**
 * The content of a stream that has ended with all its data still buffered in it (undici reads
 * its length then, and sends an empty one with content-length: 0); null otherwise.
 */
function bufferedContent(s: EventStream): Buffer | null {
  const r = s as EventStream & { read?: (n?: number) => unknown; _readableState?: BufferedState };
  // A read(0) finds an end the stream has reached but not yet noticed (undici does the same).
  if (typeof r.read === 'function' && r._readableState?.ended !== true) r.read(0);
  const state = r._readableState;
  if (typeof r.read !== 'function' || state == null || state.objectMode !== false || state.ended !== true) return null;
  if (!Number.isFinite(state.length)) return null;
  // Everything at once; on an empty stream the read is what makes it emit 'end'.
  const all = r.read();
  if (all === null) return Buffer.alloc(0);
  if (typeof all === 'string') return Buffer.from(all);
  return Buffer.isBuffer(all) ? all : null;
}

/** The parts of a request without a body: one object for all of them (nothing writes to it). */
const NO_BODY: Readonly<RequestBodyParts> = Object.freeze(parts(null));

export function requestBodyParts(body: unknown): Readonly<RequestBodyParts> {
  if (body == null) return NO_BODY;
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
  if (isEventStream(body)) {
    const content = bufferedContent(body);
    if (content === null) return parts(null, body);
    // An empty one is no body at all: framed as the method wants (content-length: 0 on a POST).
    const p = parts(content.length > 0 ? content : null);
    p.ended = body;
    return p;
  }
  if (isStreamBody(body)) return parts(null, body);
  throw new InvalidArgumentError('body must be a string, a Buffer, a Readable stream, an iterable, or an async iterable');
}
