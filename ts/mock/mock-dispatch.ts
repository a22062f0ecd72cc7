// Replaying a mocked response through a dispatch handler exactly as a live one arrives:
// onRequestStart, then (after any delay) onResponseStart, onResponseData per chunk and
// onResponseEnd, driven by a controller that honours pause, resume and abort.
import { STATUS_CODES } from '../core/status-codes.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { DispatchHandler, IncomingHeaders } from '../core/types.js';
import { RequestController } from '../handler/controller.js';
import { checkResponseOptions, checkStatus, replySpecOf, type MockInterceptor } from './mock-interceptor.js';

/** What a real request's controller offers a handler. */
export interface RequestControllerLike {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

/** A response ready to be delivered. */
export interface MockReply {
  statusCode: number;
  statusText: string;
  headers: IncomingHeaders;
  rawHeaders: Buffer[];
  body: Buffer;
  trailers: IncomingHeaders;
  rawTrailers: Buffer[];
}

// Large bodies are delivered in pieces so that a handler pausing mid-body is honoured between them.
const CHUNK = 64 * 1024;

function toBody(data: unknown): Buffer {
  if (data === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (typeof data === 'string') return Buffer.from(data);
  if (typeof data === 'object') return Buffer.from(JSON.stringify(data));
  return Buffer.from(String(data));
}

/** Header objects merged left to right (later names win, case-insensitively), as a record and raw pairs. */
function headerSet(...sources: (Record<string, unknown> | undefined)[]): [IncomingHeaders, Buffer[]] {
  const merged = new Map<string, [string, string | string[]]>();
  for (const source of sources) {
    if (source == null) continue;
    for (const [name, value] of Object.entries(source)) {
      if (value === undefined || value === null) continue;
      merged.set(name.toLowerCase(), [name, Array.isArray(value) ? value.map(String) : String(value)]);
    }
  }
  const record: IncomingHeaders = {};
  const raw: Buffer[] = [];
  for (const [lower, [name, value]] of merged) {
    record[lower] = value;
    for (const v of Array.isArray(value) ? value : [value]) raw.push(Buffer.from(name), Buffer.from(v));
  }
  return [record, raw];
}

function buildReply(
  statusCode: number,
  data: unknown,
  options: MockInterceptor.MockResponseOptions,
  spec: { defaultHeaders?: Record<string, unknown>; defaultTrailers?: Record<string, unknown>; contentLength: boolean },
): MockReply {
  const body = toBody(data);
  const length = spec.contentLength ? { 'content-length': String(body.length) } : undefined;
  const [headers, rawHeaders] = headerSet(spec.defaultHeaders, length, options.headers as Record<string, unknown>);
  const [trailers, rawTrailers] = headerSet(spec.defaultTrailers, options.trailers);
  return { statusCode, statusText: STATUS_CODES[statusCode] ?? 'unknown', headers, rawHeaders, body, trailers, rawTrailers };
}

function isPromise<T>(value: unknown): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

/** Whether the dispatch replies through reply(callback) (the callback chooses status and data). */
export function hasReplyCallback(dispatch: MockInterceptor.MockDispatch): boolean {
  return typeof (replySpecOf(dispatch) as { callback?: unknown } | undefined)?.callback === 'function';
}

/**
 * The reply a registered dispatch gives to one request; callbacks (reply(fn), or a data function)
 * run now, and may return a promise.
 */
export function produceReply(
  dispatch: MockInterceptor.MockDispatch,
  request: MockInterceptor.MockResponseCallbackOptions,
): MockReply | Promise<MockReply> {
  const spec = replySpecOf(dispatch) ?? { contentLength: false };
  const { callback } = spec as { callback?: MockInterceptor.MockReplyOptionsCallback<object> };
  if (callback !== undefined) {
    const finish = (result: unknown): MockReply => {
      if (result === null || typeof result !== 'object') {
        throw new InvalidArgumentError('reply(callback): the callback must return an object { statusCode, data, responseOptions }');
      }
      const { statusCode, data = '', responseOptions = {} } = result as MockInterceptor.MockReplyOptions<object>;
      checkStatus(statusCode, 'reply(callback)');
      checkResponseOptions(responseOptions, 'reply(callback)');
      return buildReply(statusCode, data, responseOptions, spec);
    };
    const result = callback(request);
    return isPromise(result) ? Promise.resolve(result).then(finish) : finish(result);
  }
  const { statusCode = 200, data, headers, trailers } = dispatch.data;
  // Default headers and trailers are already folded into data at reply() time.
  const replyWith = (body: unknown): MockReply =>
    buildReply(statusCode, body, { headers, trailers }, { contentLength: spec.contentLength });
  if (typeof data === 'function') {
    const body = (data as MockInterceptor.MockResponseDataHandler<object>)(request);
    return isPromise(body) ? Promise.resolve(body).then(replyWith) : replyWith(body);
  }
  return replyWith(data);
}

/**
 * One mocked request in flight, and the controller its handler receives (handler/controller.ts).
 * Every handler callback runs at most once per stage; an abort stops delivery and reports the
 * reason once.
 */
export class MockReplay extends RequestController {
  #onSettled: (replay: MockReplay) => void;
  /** The real request this one was handed to (a streamed body that no interceptor matched). */
  #forward: RequestControllerLike | null = null;
  #timer: NodeJS.Timeout | undefined;
  #steps: (() => void)[] = [];
  #pumping = false;
  #rawHeaders: Buffer[] | null = null;
  #rawTrailers: Buffer[] | null = null;

  constructor(handler: DispatchHandler, onSettled: (replay: MockReplay) => void) {
    super(handler);
    this.#onSettled = onSettled;
  }

  get rawHeaders(): Buffer[] | null {
    return this.#rawHeaders;
  }
  get rawTrailers(): Buffer[] | null {
    return this.#rawTrailers;
  }

  /** Runs a handler hook; a throw aborts the request. False when the request is over. */
  hook(fn: () => void): boolean {
    return !this.done && this.call(fn) && !this.done;
  }

  /** The dispatcher that answers this request, told when it settles. */
  attach(onSettled: (replay: MockReplay) => void): void {
    this.#onSettled = onSettled;
  }

  /**
   * From now on the real request `controller` answers: the handler keeps this controller (it got
   * it in onRequestStart), so abort, pause and resume pass through to the real one.
   */
  forwardTo(controller: RequestControllerLike): void {
    this.#forward = controller;
    if (this.paused) controller.pause();
  }

  override abort(reason: Error): void {
    if (this.#forward !== null) this.#forward.abort(reason);
    else super.abort(reason);
  }
  override pause(): void {
    super.pause();
    this.#forward?.pause();
  }
  override resume(): void {
    super.resume();
    this.#forward?.resume();
  }

  protected override onResume(): void {
    // Delivery continues later, never inside the caller's resume() (a stream's _read, typically).
    if (this.#steps.length > 0) void Promise.resolve().then(() => this.#pump());
  }

  /** A mock request is sent at once: onBodySent with its body (if any), then onRequestSent. */
  sent(body: unknown): void {
    if (this.done) return;
    if (body != null) this.call(() => this.handler.onBodySent?.(body as Buffer));
    if (!this.done) this.call(() => this.handler.onRequestSent?.());
  }

  /**
   * Runs `action` after `delayMs` (a timer, so fake timers govern it as they would a slow server),
   * or on the next microtask when there is no delay. Promise-based scheduling keeps undelayed
   * replies working under fake timers that also replace setImmediate and process.nextTick.
   */
  later(delayMs: number | undefined, action: () => void): void {
    if (this.done) return;
    const run = (): void => {
      this.#timer = undefined;
      if (!this.done) this.call(action);
    };
    if (typeof delayMs === 'number' && delayMs > 0) this.#timer = setTimeout(run, delayMs);
    else void Promise.resolve().then(run);
  }

  /** Delivers `reply` through the handler, chunk by chunk, honouring pause. */
  respond(reply: MockReply): void {
    if (this.done) return;
    this.#steps.push(() => {
      this.#rawHeaders = reply.rawHeaders;
      this.handler.onResponseStart?.(this, reply.statusCode, reply.headers, reply.statusText);
    });
    for (let at = 0; at < reply.body.length; at += CHUNK) {
      const chunk = reply.body.subarray(at, Math.min(at + CHUNK, reply.body.length));
      this.#steps.push(() => this.handler.onResponseData?.(this, chunk));
    }
    this.#steps.push(() => {
      this.#rawTrailers = reply.rawTrailers;
      this.end(reply.trailers);
    });
    this.#pump();
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (!this.done && !this.paused && this.#steps.length > 0) {
        const step = this.#steps.shift()!;
        this.call(step);
      }
    } finally {
      this.#pumping = false;
    }
  }

  protected onSettled(): void {
    this.#steps = [];
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#onSettled(this);
  }
}
