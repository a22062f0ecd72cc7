// Request bodies across several attempts (redirects, retries). A body given as a factory
// (`body: () => stream`) is called afresh for each attempt, so streamed uploads can be replayed;
// a plain stream can be sent once only, and a later attempt that would need it again must fail.
import { Readable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';
import type { BodyFactory, RequestBody } from '../core/types.js';

/** Calls a body factory and checks that it gave a body (not another function or a promise). */
export function resolveBodyFactory(factory: BodyFactory): RequestBody {
  const body = factory();
  if (typeof body === 'function' || (body !== null && typeof (body as { then?: unknown }).then === 'function')) {
    throw new InvalidArgumentError('a body factory must return the body itself (a stream, an iterable, a string or bytes)');
  }
  return body;
}

/** Bytes, strings, arrays and factories can be sent any number of times. */
function isReplayable(body: unknown): boolean {
  return (
    body == null ||
    typeof body === 'string' ||
    typeof body === 'function' ||
    body instanceof Uint8Array ||
    Array.isArray(body)
  );
}

/**
 * The body another attempt of the same request sends: the body itself when it can be sent again;
 * none for a GET or HEAD whose stream an attempt already took (a pipeline's unused request side:
 * such a body carries no meaning); null when it cannot be replayed. A stream handed to an attempt
 * counts as taken even if nothing was read yet: that attempt may still be reading it.
 */
export function replayBody(
  body: RequestBody | BodyFactory | undefined,
  method: string,
  dispatched: boolean,
): { body: RequestBody | BodyFactory | undefined } | null {
  if (!isSpent(body, dispatched)) return { body };
  return method === 'GET' || method === 'HEAD' ? { body: null } : null;
}

/**
 * A body that cannot go out again: a one-shot body (stream, iterable) an attempt was handed
 * (`dispatched`) or that was read or destroyed before.
 */
export function isSpent(body: unknown, dispatched: boolean): boolean {
  if (isReplayable(body)) return false;
  return dispatched || (body instanceof Readable && (body.readableDidRead || body.destroyed));
}

/** Releases a stream body that will not be sent (a redirect turned the request into a GET). */
export function discardBody(body: unknown): void {
  if (body instanceof Readable && !body.destroyed) {
    body.on('error', () => {});
    body.destroy();
  }
}
