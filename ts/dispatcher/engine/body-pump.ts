// Feeds a streamed request body (a Readable, an async or a sync iterable) into the engine.
//
// - An iterable's request goes to the engine only once it produced its first chunk (undici also
//   writes the head together with the first chunk): one that fails before that fails the request
//   with nothing on the wire; one that fails later aborts it, which closes its connection. A
//   Readable's request goes at once: pipeline() users may read the response before writing.
// - Always-ready sources (generators, arrays) never starve the event loop: the pump yields a
//   macrotask every YIELD_BYTES, so engine events (a response that ended early) get through.
// - When the request settles (completed, failed or aborted), the source is released: a Readable
//   is destroyed, an iterator is returned.
import { Readable } from 'node:stream';
import type { EngineRequest } from './engine-request.js';
import type { StreamBody } from '../../core/request-body.js';


/** Bytes (a chunk counts at least MIN_CHUNK_COST) fed between two yields to the event loop. */
const YIELD_BYTES = 64 * 1024;
const MIN_CHUNK_COST = 1024;

type AnyIterator = Iterator<unknown> | AsyncIterator<unknown>;

function noop(): void {}

const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A chunk as bytes; anything else fails with node's own TypeError (ERR_INVALID_ARG_TYPE), as in undici. */
export function chunkBytes(chunk: unknown): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (ArrayBuffer.isView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  // Throws the TypeError undici's writer raises for such a chunk.
  Buffer.byteLength(chunk as string);
  throw new TypeError(`Received an invalid body chunk of type ${typeof chunk}`);
}

function iteratorOf(source: StreamBody): AnyIterator {
  const asyncIt = (source as AsyncIterable<unknown>)[Symbol.asyncIterator];
  if (typeof asyncIt === 'function') return asyncIt.call(source);
  return (source as Iterable<unknown>)[Symbol.iterator]();
}

/**
 * Runs the body of `req`. `dispatchHead(first)` hands the request to the engine with the first
 * chunk (null: the source was empty; undefined: streamed, nothing read yet) and returns false
 * when the engine refused it.
 */
export async function pumpBody(
  req: EngineRequest,
  source: StreamBody,
  dispatchHead: (first: Buffer | null | undefined) => boolean,
): Promise<void> {
  const it = iteratorOf(source);
  let finished = false;
  const release = (err: Error | null): void => {
    if (finished) return;
    finished = true;
    if (source instanceof Readable) {
      if (!source.destroyed) {
        source.on('error', noop);
        source.destroy(err ?? undefined);
      }
      return;
    }
    try {
      const r = it.return?.();
      if (r instanceof Promise) r.catch(noop);
    } catch {
      /* a generator that is running cannot be returned; it sees the request is done next step */
    }
  };
  req.onSettle = release;

  let budget = 0;
  if (source instanceof Readable) {
    if (!dispatchHead(undefined)) {
      finished = true;
      return;
    }
  } else {
    let first: Buffer | null;
    try {
      first = await pull(it);
    } catch (err) {
      // Nothing was written yet: the request simply fails.
      req.fail(err as Error);
      return;
    }
    if (req.done) return;
    if (!dispatchHead(first) || first === null) {
      finished = true;
      return;
    }
    budget = first.length + MIN_CHUNK_COST;
  }
  try {
    for (;;) {
      if (budget >= YIELD_BYTES) {
        budget = 0;
        await macrotask();
        if (req.done) return;
      }
      const chunk = await pull(it);
      if (req.done) return;
      if (chunk === null) break;
      budget += chunk.length + MIN_CHUNK_COST;
      if (!req.writeBody(chunk)) await req.drained();
      if (req.done) return;
    }
    finished = true;
    req.endBody();
  } catch (err) {
    // Some of the body is on the wire: the request is aborted, which closes its connection.
    req.abort(err as Error);
  }
}

/** The next non-empty chunk of the source, or null at its end. */
async function pull(it: AnyIterator): Promise<Buffer | null> {
  for (;;) {
    let step = it.next();
    if (step instanceof Promise) step = await step;
    const { done, value } = step as IteratorResult<unknown>;
    if (done) return null;
    const buf = chunkBytes(value);
    if (buf.length > 0) return buf;
  }
}
