// One request on the engine: routes its engine events to the user's handler and is the
// controller handed to that handler (abort / pause / resume / raw headers).
import { closeRequest, control, openRequest, type EngineKind } from '../native/engine.js';
import { engineError } from '../native/error-codes.js';
import type { RequestSink } from '../native/events.js';
import { EngineSocket } from './engine-socket.js';
import type { DispatchController, DispatchHandler, IncomingHeaders } from './types.js';
import type { DiagnosticsRequest } from '../core/diagnostics.js';

export interface RequestOwner {
  requestDone(req: EngineRequest): void;
  /** The engine driver the request runs on. */
  readonly engine: EngineKind;
}

const toBuffers = (raw: string[] | null): Buffer[] | null => (raw === null ? null : raw.map((s) => Buffer.from(s)));

export class EngineRequest implements RequestSink, DispatchController {
  readonly id: number;
  readonly handler: DispatchHandler;
  readonly context: object = {};
  #owner: RequestOwner;
  #paused = false;
  #aborted = false;
  #reason: Error | null = null;
  /** Settled: completed, failed or aborted; nothing more reaches the handler. */
  #done = false;
  #rawHeaders: string[] | null = null;
  #rawTrailers: string[] | null = null;
  /** After an upgrade: the socket the tunnel's bytes go to. */
  #tunnel: EngineSocket | null = null;
  #drainWaiter: (() => void) | null = null;
  /** Set when diagnostics channels / NODE_DEBUG watch this request (core/diagnostics.ts). */
  trace: DiagnosticsRequest | null = null;
  /** A buffered body, reported to onBodySent once the request is known to be sent. */
  sentBody: Buffer | null = null;
  /** The whole request is with the engine (buffered, or a streamed body's end). */
  #bodyComplete = false;
  #sentReported = false;
  /** Called once when the request settles (the body pump releases its source); the error if it failed. */
  onSettle: ((err: Error | null) => void) | null = null;

  constructor(owner: RequestOwner, handler: DispatchHandler) {
    this.#owner = owner;
    this.handler = handler;
    this.id = openRequest(this, owner.engine);
  }

  get aborted(): boolean {
    return this.#aborted;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get reason(): Error | null {
    return this.#reason;
  }
  get done(): boolean {
    return this.#done;
  }
  get rawHeaders(): Buffer[] | null {
    return toBuffers(this.#rawHeaders);
  }
  get rawTrailers(): Buffer[] | null {
    return toBuffers(this.#rawTrailers);
  }

  abort(reason: Error): void {
    if (this.#done) return;
    this.#aborted = true;
    this.#reason = reason;
    control.abort(this.id);
    this.fail(reason);
  }

  pause(): void {
    if (this.#paused || this.#done) return;
    this.#paused = true;
    control.pause(this.id);
  }

  /** Re-sends a pause the engine could not see yet (made before the request was dispatched). */
  syncPause(): void {
    if (this.#paused && !this.#done) control.pause(this.id);
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (!this.#done) control.resume(this.id);
  }

  /** Settles with an error (destroy, abort, engine failure); the handler hears it once. */
  fail(err: Error): void {
    if (this.#done) return;
    if (this.trace !== null) this.trace.error(err, this.#aborted);
    this.#settle(false, err);
    try {
      this.handler.onResponseError?.(this, err);
    } catch (thrown) {
      // onResponseError must not throw; surface it rather than corrupt our state.
      process.nextTick(() => {
        throw thrown;
      });
    }
  }

  /** Runs onRequestStart; a throw aborts the request with that error. */
  start(): void {
    try {
      this.handler.onRequestStart?.(this, this.context);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  #settle(keepRouting = false, err: Error | null = null): void {
    this.#done = true;
    if (!keepRouting) closeRequest(this.id);
    this.#owner.requestDone(this);
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    waiter?.();
    const onSettle = this.onSettle;
    this.onSettle = null;
    onSettle?.(err);
  }

  /** Streams a piece of the request body into the engine; false: await `drained()` first. */
  writeBody(chunk: Buffer): boolean {
    const ok = control.write(this.id, chunk);
    if (this.trace !== null) this.trace.bodyChunk(chunk);
    this.#hook(() => this.handler.onBodySent?.(chunk));
    return ok;
  }

  endBody(): void {
    this.#bodyComplete = true;
    control.end(this.id);
    if (this.trace !== null) this.trace.bodyEnded();
  }

  /** The request was handed over whole (no body, or a buffered one). */
  bodyComplete(body: Buffer | null): void {
    this.sentBody = body !== null && body.length > 0 ? body : null;
    this.#bodyComplete = true;
  }

  /** Runs a handler hook; a throw aborts the request with it (undici's rule). False: it threw. */
  #hook(fn: () => void): boolean {
    try {
      fn();
      return true;
    } catch (err) {
      this.abort(err as Error);
      return false;
    }
  }

  /**
   * A response has begun, so the request was sent: onBodySent (buffered bodies) and
   * onRequestSent, once, then onResponseStarted for each response head. False: a hook threw.
   */
  #responseBegins(): boolean {
    if (!this.#sentReported) {
      this.#sentReported = true;
      const body = this.sentBody;
      this.sentBody = null;
      if (body !== null && !this.#hook(() => this.handler.onBodySent?.(body))) return false;
      if (this.#bodyComplete && !this.#hook(() => this.handler.onRequestSent?.())) return false;
    }
    return this.#hook(() => this.handler.onResponseStarted?.());
  }

  /** Resolves when the engine wants more body, or the request settled. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#done) resolve();
      else this.#drainWaiter = resolve;
    });
  }

  onEngineBodyDrain(): void {
    if (this.#tunnel !== null) {
      this.#tunnel.onDrain();
      return;
    }
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    waiter?.();
  }

  onEngineUpgrade(status: number, _reason: string, headers: IncomingHeaders, raw: string[], addrs: string): void {
    if (this.#done || !this.#responseBegins()) return;
    this.#rawHeaders = raw;
    const socket = new EngineSocket(this.id, addrs);
    this.#tunnel = socket;
    // The request is complete for its dispatcher; the engine keeps routing the tunnel's bytes here.
    this.#settle(true);
    if (typeof this.handler.onRequestUpgrade !== 'function') {
      socket.destroy();
      return;
    }
    try {
      this.handler.onRequestUpgrade(this, status, headers, socket);
    } catch (err) {
      socket.destroy(err as Error);
    }
  }

  onEngineHead(status: number, reason: string, headers: IncomingHeaders, raw: string[]): void {
    if (this.#done || !this.#responseBegins()) return;
    this.#rawHeaders = raw;
    if (this.trace !== null && status >= 200) this.trace.responseHeaders(status, reason, raw);
    try {
      this.handler.onResponseStart?.(this, status, headers, reason);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  onEngineData(chunk: Buffer): void {
    if (this.#tunnel !== null) {
      this.#tunnel.onData(chunk);
      return;
    }
    if (this.#done) return;
    if (this.trace !== null) this.trace.bodyChunkReceived(chunk);
    try {
      this.handler.onResponseData?.(this, chunk);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  onEngineEnd(trailers: IncomingHeaders, raw: string[]): void {
    if (this.#tunnel !== null) {
      this.#tunnel.onEnd();
      return;
    }
    if (this.#done) return;
    this.#rawTrailers = raw;
    if (this.trace !== null) this.trace.trailers(raw);
    this.#settle();
    try {
      this.handler.onResponseEnd?.(this, trailers);
    } catch (err) {
      // The request is complete; the only place left to report is the handler's error callback.
      try {
        this.handler.onResponseError?.(this, err as Error);
      } catch {
        /* must not throw */
      }
    }
  }

  onEngineError(code: number, errno: string, message: string): void {
    if (this.#tunnel !== null) {
      this.#tunnel.destroy(engineError(code, errno, message));
      return;
    }
    this.fail(engineError(code, errno, message));
  }

  onEngineSent(addrs: string): void {
    if (this.trace !== null && !this.#done) this.trace.sent(addrs);
  }

  onEngineRetry(): void {
    // Re-sent on a new connection after the one it was on failed before any response byte.
    if (!this.#done) this.start();
  }
}
