// The controller a dispatcher hands to a request's handler (undici's DispatchController), and the
// rules every request driver follows when it calls that handler: a hook that throws aborts the
// request with what it threw; the request settles once (completed, failed or aborted) and after
// that nothing more reaches the handler; onResponseError is heard once and must not throw.
// Engine requests (dispatcher/engine/engine-request.ts), mock replays (mock/mock-dispatch.ts) and
// deduplicated callers (interceptor/deduplicate.ts) are all this controller; they add how pause / resume / abort reach what produces the response.
import { RequestAbortedError } from '../core/errors.js';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';

/**
 * Marks a handler that keeps the response chunks it is given to itself (request()'s): a controller
 * that knows nothing else saw a chunk says so through `chunksExclusive`, and such a handler may
 * then hand the chunk's memory to the user without copying it.
 */
export const kSoleReader = Symbol('ferro.soleReader');

/** Whether the chunk `controller` is handing over right now belongs to the handler alone. */
export function chunkIsExclusive(controller: DispatchController): boolean {
  return (controller as { chunksExclusive?: boolean }).chunksExclusive === true;
}

/**
 * The ms after which a request() body nobody reads is let go (api/unconsumed-bodies.ts): the
 * engine dispatcher's `unconsumedBodyTimeout`, passed on by its controller; 0 (off) for any other.
 */
export function unconsumedBodyTimeoutOf(controller: DispatchController): number {
  const ms = (controller as { unconsumedBodyTimeout?: number }).unconsumedBodyTimeout;
  return typeof ms === 'number' ? ms : 0;
}

const PAUSED = 1;
const ABORTED = 2;
const DONE = 4;

export abstract class RequestController implements DispatchController {
  readonly handler: DispatchHandler;
  readonly context: object;
  /**
   * PAUSED | ABORTED | DONE (settled: completed, failed or aborted; nothing more reaches the
   * handler). Bits of one field rather than three: every request in flight or queued carries it.
   */
  #state = 0;
  #reason: Error | null = null;

  /** `context`: what onRequestStart receives (requests sharing one answer share it). */
  constructor(handler: DispatchHandler, context: object = {}) {
    this.handler = handler;
    this.context = context;
  }

  get aborted(): boolean {
    return (this.#state & ABORTED) !== 0;
  }
  get paused(): boolean {
    return (this.#state & PAUSED) !== 0;
  }
  get reason(): Error | null {
    return this.#reason;
  }
  get done(): boolean {
    return (this.#state & DONE) !== 0;
  }
  abstract get rawHeaders(): Buffer[] | null;
  abstract get rawTrailers(): Buffer[] | null;

  abort(reason: Error): void {
    if (this.done) return;
    this.#state |= ABORTED;
    this.#reason = reason ?? new RequestAbortedError();
    this.onAbort();
    this.fail(this.#reason);
  }

  pause(): void {
    if ((this.#state & (PAUSED | DONE)) !== 0) return;
    this.#state |= PAUSED;
    this.onPause();
  }

  resume(): void {
    if (!this.paused) return;
    this.#state &= ~PAUSED;
    if (!this.done) this.onResume();
  }

  /**
   * Runs onRequestStart; a throw aborts the request with that error. A try/catch here rather than
   * call(): the closure call() takes would be an allocation per request.
   */
  start(): void {
    try {
      this.handler.onRequestStart?.(this, this.context);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  /** Settles with an error (destroy, abort, a failure underneath); the handler hears it once. */
  fail(err: Error): void {
    if (this.done) return;
    this.onFail(err);
    this.settle(err);
    this.report(err);
  }

  /** The response is complete: settles, then onResponseEnd. */
  protected end(trailers: IncomingHeaders): void {
    this.settle(null);
    try {
      this.handler.onResponseEnd?.(this, trailers);
    } catch (err) {
      // The response is complete; the handler's error callback is the only place left to report.
      this.report(err as Error);
    }
  }

  /** Settles without a word to the handler (the request became a tunnel its handler now owns). */
  protected detach(): void {
    this.settle(null);
  }

  /** (TypeScript-private, not `#`: a `#` method costs each instance a slot.) */
  private settle(err: Error | null): void {
    this.#state |= DONE;
    this.onSettled(err);
  }

  /**
   * Runs a handler hook; a throw aborts the request with it (undici's rule). False: it threw.
   * (Mock replays and deduplicated callers; the engine's per-response hooks inline the try/catch.)
   */
  protected call(fn: () => void): boolean {
    try {
      fn();
      return true;
    } catch (err) {
      this.abort(err as Error);
      return false;
    }
  }

  protected report(err: Error): void {
    try {
      this.handler.onResponseError?.(this, err);
    } catch (thrown) {
      // onResponseError must not throw; surface it rather than corrupt our state.
      process.nextTick(() => {
        throw thrown;
      });
    }
  }

  /** The request settled (done is now true); `err` when it failed. */
  protected abstract onSettled(err: Error | null): void;
  /** Before a failure settles the request (diagnostics hear it here). */
  protected onFail(_err: Error): void {}
  /** An abort, before the failure it causes is reported. */
  protected onAbort(): void {}
  protected onPause(): void {}
  /** A resume while the request is still live. */
  protected onResume(): void {}
}
