// Feeds a streamed request body (a stream, an async or a sync iterable) into the engine.
//
// - An iterable's request goes to the engine only once it produced its first chunk (undici also
//   writes the head together with the first chunk): one that fails before that fails the request
//   with nothing on the wire; one that fails later aborts it once what it gave is written, which
//   closes its connection. So does a stream with a declared content-length. A stream without
//   one (chunked) goes at once: pipeline() users may read the response before writing.
// - A chunk that would take the body past its declared content-length fails the request before
//   it is written (nothing at all is sent when it is the first).
// - Always-ready sources (generators, arrays) never starve the event loop: the pump yields a
//   macrotask every YIELD_BYTES, so engine events (a response that ended early) get through.
// - Streams are read and let go by stream-reader.ts; an iterator is returned when the request
//   settles (completed, failed or aborted).
import { RequestContentLengthMismatchError } from '../../core/errors.js';
import { isEventStream, type EventStream, type StreamBody } from '../../core/request-body.js';
import type { EngineRequest } from './engine-request.js';
import { StreamReader } from './stream-reader.js';

/** Bytes (a chunk counts at least MIN_CHUNK_COST) fed between two yields to the event loop. */
const YIELD_BYTES = 64 * 1024;
const MIN_CHUNK_COST = 1024;

type AnyIterator = Iterator<unknown> | AsyncIterator<unknown>;

function noop(): void {}

const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A chunk as bytes; anything else fails with node's own TypeError (ERR_INVALID_ARG_TYPE), as in undici. */
function chunkBytes(chunk: unknown): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (ArrayBuffer.isView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  // Throws the TypeError undici's writer raises for such a chunk.
  Buffer.byteLength(chunk as string);
  throw new TypeError(`Received an invalid body chunk of type ${typeof chunk}`);
}

function iteratorOf(source: Iterable<unknown> | AsyncIterable<unknown>): AnyIterator {
  const asyncIt = (source as AsyncIterable<unknown>)[Symbol.asyncIterator];
  if (typeof asyncIt === 'function') return asyncIt.call(source);
  return (source as Iterable<unknown>)[Symbol.iterator]();
}

/**
 * Watches a stream whose whole content went to the engine as bytes (core/request-body.ts): a
 * late 'error' still fails the request, and the stream is let go when it settles.
 */
export function watchEndedStream(req: EngineRequest, stream: EventStream): void {
  const reader = new StreamReader(stream, (err) => req.abort(err), true);
  req.onSettle = (err) => reader.release(err);
}

/**
 * Runs the body of `req`. `length` is its declared content-length. `dispatchHead(first)` hands
 * the request to the engine ahead of the first chunk (null: the source was empty; undefined:
 * streamed, nothing read yet), which is then written, and returns false when the engine refused it.
 */
export async function pumpBody(
  req: EngineRequest,
  source: StreamBody,
  length: number | null,
  dispatchHead: (first: Buffer | null | undefined) => boolean,
): Promise<void> {
  /** The request is with the engine: a failure from now on aborts it (closing its connection). */
  let handed = false;
  const failWith = (err: Error): void => {
    if (handed) req.abortBody(err);
    else req.fail(err);
  };
  let it: AnyIterator;
  if (isEventStream(source)) {
    const reader = new StreamReader(source, failWith);
    req.onSettle = (err) => reader.release(err);
    it = reader;
  } else {
    const iterator = iteratorOf(source);
    req.onSettle = () => {
      try {
        const r = iterator.return?.();
        if (r instanceof Promise) r.catch(noop);
      } catch {
        /* a generator that is running cannot be returned; it sees the request is done next step */
      }
    };
    it = iterator;
  }

  let written = 0;
  let budget = 0;
  // The chunk last pulled as the source gave it (a string stays a string): onBodySent hears that, as in undici.
  const slot: PullSlot = { given: null };
  if (isEventStream(source) && length === null) {
    if (!dispatchHead(undefined)) return;
    handed = true;
  } else {
    let first: Buffer | null;
    try {
      first = await pull(it, slot);
    } catch (err) {
      // Nothing was written yet: the request simply fails.
      req.fail(err as Error);
      return;
    }
    if (req.done) return;
    if (first !== null && length !== null && first.length > length) {
      req.fail(new RequestContentLengthMismatchError());
      return;
    }
    if (!dispatchHead(first) || first === null) return;
    handed = true;
    req.writeBody(first, slot.given);
    written = first.length;
    budget = first.length + MIN_CHUNK_COST;
  }
  try {
    for (;;) {
      if (budget >= YIELD_BYTES) {
        budget = 0;
        await macrotask();
        if (req.done) return;
      }
      const chunk = await pull(it, slot);
      if (req.done) return;
      if (chunk === null) break;
      written += chunk.length;
      if (length !== null && written > length) throw new RequestContentLengthMismatchError();
      budget += chunk.length + MIN_CHUNK_COST;
      if (!req.writeBody(chunk, slot.given)) await req.drained();
      if (req.done) return;
    }
    req.endBody();
  } catch (err) {
    // Some of the body was given: it is still written, then the request is aborted (its
    // connection closed), as undici leaves on the socket what it wrote.
    failWith(err as Error);
  }
}

/** Where pull() leaves the chunk it returns as the source gave it. */
interface PullSlot {
  given: unknown;
}

/** The next non-empty chunk as bytes (null at the end); `slot.given` is that chunk as the source gave it. */
async function pull(it: AnyIterator, slot: PullSlot): Promise<Buffer | null> {
  for (;;) {
    let step = it.next();
    if (step instanceof Promise) step = await step;
    const { done, value } = step as IteratorResult<unknown>;
    if (done) return null;
    const buf = chunkBytes(value);
    slot.given = value;
    if (buf.length > 0) return buf;
  }
}
