// Serving a stored response: its body (in whatever form the store gave it) gathered into one
// Buffer, then delivered through the handler by a replay controller that honours pause, resume
// and abort, exactly as a live response arrives.
import { STATUS_CODES } from '../core/status-codes.js';
import { toRawHeaders } from '../handler/legacy-handler.js';
import { MockReplay } from '../mock/mock-dispatch.js';
import type { DispatchController, DispatchHandler, IncomingHeaders, RequestTimings } from '../core/types.js';
import type { CacheBody } from './cache-store.js';

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk));
}

// Joined bodies of stored chunk arrays, so a store that returns the same array on every hit
// (MemoryCacheStore does) is joined once.
const joined = new WeakMap<object, Buffer>();

/** The whole body; synchronous for buffers, strings and arrays, a promise for streams. */
export function bodyBuffer(body: CacheBody | null | undefined): Buffer | Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string' || body instanceof Uint8Array) return toBuffer(body);
  if (Array.isArray(body)) {
    if (body.length === 1) return toBuffer(body[0]);
    let whole = joined.get(body);
    if (whole === undefined) joined.set(body, (whole = Buffer.concat(body.map(toBuffer))));
    return whole;
  }
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
    return (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of body as AsyncIterable<unknown>) chunks.push(toBuffer(chunk));
      return Buffer.concat(chunks);
    })();
  }
  return Buffer.concat(Array.from(body as Iterable<unknown>, toBuffer));
}

export interface StoredReply {
  statusCode: number;
  statusMessage?: string;
  headers: IncomingHeaders;
  body: Buffer;
}

function replayOf(handler: DispatchHandler, reply: StoredReply): [MockReplay, () => void] {
  const replay = new MockReplay(handler, () => {});
  const respond = (): void =>
    replay.respond({
      statusCode: reply.statusCode,
      statusText: reply.statusMessage || STATUS_CODES[reply.statusCode] || '',
      headers: reply.headers,
      rawHeaders: toRawHeaders(reply.headers),
      body: reply.body,
      trailers: {},
      rawTrailers: [],
    });
  return [replay, respond];
}

/**
 * A whole request answered from the cache: onRequestStart now, the response in the event loop's
 * check phase. Not a microtask: a caller that issues its next request on each end would otherwise
 * chain hits in microtasks forever and starve timers and I/O.
 */
export function serveStored(handler: DispatchHandler, reply: StoredReply): void {
  const [replay, respond] = replayOf(handler, reply);
  replay.start();
  setImmediate(respond);
}

/** Answers a request that has already started (against `controller`) from the cache. */
export function continueWithStored(handler: DispatchHandler, controller: SwitchController, reply: StoredReply): void {
  const through: DispatchHandler = {
    onResponseStart: (_c, status, headers, message) => handler.onResponseStart?.(controller, status, headers, message),
    onResponseData: (_c, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (_c, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (_c, err) => handler.onResponseError?.(controller, err),
  };
  const [replay, respond] = replayOf(through, reply);
  controller.target = replay;
  setImmediate(respond);
}

/**
 * The controller a handler keeps while its response may come from the origin or from the cache:
 * it forwards to whichever is delivering now, and remembers whether the handler aborted.
 */
export class SwitchController implements DispatchController {
  target: DispatchController | null = null;
  #abortedByHandler = false;

  get abortedByHandler(): boolean {
    return this.#abortedByHandler;
  }
  get aborted(): boolean {
    return this.target?.aborted ?? this.#abortedByHandler;
  }
  get paused(): boolean {
    return this.target?.paused ?? false;
  }
  get reason(): Error | null {
    return this.target?.reason ?? null;
  }
  get rawHeaders(): Buffer[] | null {
    return this.target?.rawHeaders ?? null;
  }
  get rawTrailers(): Buffer[] | null {
    return this.target?.rawTrailers ?? null;
  }
  /** The request's timings (ferro), as the controller underneath has them. */
  get timings(): RequestTimings | undefined {
    return this.target?.timings;
  }
  abort(reason: Error): void {
    this.#abortedByHandler = true;
    this.target?.abort(reason);
  }
  pause(): void {
    this.target?.pause();
  }
  resume(): void {
    this.target?.resume();
  }
}
