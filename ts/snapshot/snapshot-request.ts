// What a snapshot stores of an outgoing request: its full URL, its headers (excluded names dropped,
// secrets masked) and its body bytes. Streamed and iterable bodies are read whole first, so that
// the exact bytes are both hashed and sent; nothing is ever turned into "[object …]".
import { InvalidArgumentError } from '../core/errors.js';
import { withQuery } from '../core/headers.js';
import type { DispatchOptions } from '../core/types.js';
import type { SnapshotRequest } from './snapshot-format.js';
import { storedHeaders, type HeaderPolicy } from './snapshot-headers.js';
import { headersAsObject, isDeferredBody, readDeferredBody } from '../mock/mock-request.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The request's full URL: normalized origin, path and any `query` option. */
export function requestUrl(opts: DispatchOptions, origin: string): string {
  if (typeof opts.path !== 'string' || !opts.path.startsWith('/')) {
    throw new InvalidArgumentError('opts.path must be a string starting with "/"');
  }
  if (typeof opts.method !== 'string' || opts.method === '') throw new InvalidArgumentError('opts.method must be a string');
  return new URL(`${origin}${withQuery(opts.path, opts.query)}`).href;
}

/**
 * The body's bytes: at once for strings and byte arrays, a promise for streams, iterables and
 * blobs; undefined when there is no body.
 */
export function requestBodyBytes(body: unknown): Buffer | undefined | Promise<Buffer> {
  if (body == null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (isDeferredBody(body)) return readDeferredBody(body);
  throw new InvalidArgumentError(
    'request body must be a string, Buffer, Uint8Array, ArrayBuffer, URLSearchParams, Blob, stream or iterable',
  );
}

/** The request as a snapshot stores it. The body is text when it is valid UTF-8, else base64. */
export function storedRequest(
  opts: DispatchOptions,
  url: string,
  body: Buffer | undefined,
  policy: HeaderPolicy,
): SnapshotRequest {
  const request: SnapshotRequest = {
    method: opts.method,
    url,
    headers: storedHeaders(headersAsObject(opts.headers), policy),
  };
  if (body !== undefined && body.length > 0) {
    try {
      request.body = utf8.decode(body);
    } catch {
      request.body = body.toString('base64');
      request.bodyEncoding = 'base64';
    }
  }
  return request;
}
