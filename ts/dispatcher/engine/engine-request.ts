// One request on the engine: routes its engine events to the user's handler and is the
// controller handed to that handler (handler/controller.ts), passing pause / resume / abort on
// to the engine. An upgraded request's events go to its socket instead (engine-socket.ts).
import type { AltSvcCache } from '../alt-svc.js';
import { closeRequest, control, openRequest, routeRequest, type EngineKind } from '../../native/engine.js';
import { engineError } from '../../native/error-codes.js';
import type { RequestSink } from '../../native/events.js';
import type { DispatchHandler, IncomingHeaders, RequestTimings } from '../../core/types.js';
import type { LiveTimings } from '../../native/timings.js';
import type { DiagnosticsRequest } from '../../core/diagnostics.js';
import { kSoleReader, RequestController } from '../../handler/controller.js';
import { EngineSocket } from './engine-socket.js';
import { latin1Buffers } from '../../core/headers.js';

export interface RequestOwner {
  /** Called once, when the request settles; `aborted`: by its abort. */
  requestDone(aborted: boolean): void;
  /** The engine driver the request runs on. */
  readonly engine: EngineKind;
  /** ms a request() body may go unread before its connection is released (0: never). */
  readonly unconsumedBodyTimeout: number;
  /** `allowH3` https dispatchers: what each response's Alt-Svc advertises (ts/dispatcher/alt-svc.ts). */
  readonly altSvc?: AltSvcCache | null;
}

/** The engine routes this id's events to a socket now: it closes the route itself. */
const TUNNELLED = 1;
/** The whole request is with the engine (buffered, or a streamed body's end). */
const BODY_COMPLETE = 2;
/** onBodySent / onRequestSent have been called. */
const SENT_REPORTED = 4;
/** The handler is the chunks' last stop (handler/controller.ts, `kSoleReader`). */
const SOLE_READER = 8;
/** The body's source failed: the abort lets the engine write what it was given first. */
const BODY_FAILED = 16;
/** A WebSocket handshake: the engine holds its upgraded connection (EngineSocket `held`). */
const WEBSOCKET = 32;

const toBuffers = (raw: string[] | null): Buffer[] | null => (raw === null ? null : latin1Buffers(raw));

export class EngineRequest extends RequestController implements RequestSink {
  readonly id: number;
  #owner: RequestOwner;
  #rawHeaders: string[] | null = null;
  #rawTrailers: string[] | null = null;
  #timings: LiveTimings | undefined = undefined;
  #drainWaiter: (() => void) | null = null;
  /** Set when diagnostics channels / NODE_DEBUG watch this request (core/diagnostics.ts). */
  trace: DiagnosticsRequest | null = null;
  /** A buffered body, reported to onBodySent once the request is known to be sent. */
  sentBody: Buffer | null = null;
  /** Called once when the request settles (the body pump releases its source); the error if it failed. */
  onSettle: ((err: Error | null) => void) | null = null;
  /**
   * TUNNELLED | BODY_COMPLETE | SENT_REPORTED | SOLE_READER | BODY_FAILED, one field for what would be five:
   * every request in flight or queued carries it.
   */
  #flags: number;

  constructor(owner: RequestOwner, handler: DispatchHandler) {
    super(handler);
    this.#owner = owner;
    this.#flags = (handler as { [kSoleReader]?: boolean })[kSoleReader] === true ? SOLE_READER : 0;
    this.id = openRequest(this, owner.engine);
  }

  /**
   * Each chunk is a fresh Buffer no one else holds, unless diagnostics subscribers are handed it
   * too, so a handler that keeps chunks to itself may give their memory away.
   */
  get chunksExclusive(): boolean {
    return (this.#flags & SOLE_READER) !== 0 && this.trace === null;
  }

  /** Read by request() when the response starts (handler/controller.ts, unconsumedBodyTimeoutOf). */
  get unconsumedBodyTimeout(): number {
    return this.#owner.unconsumedBodyTimeout;
  }

  ownedBy(owner: RequestOwner): boolean {
    return this.#owner === owner;
  }

  /** When each phase ended (native/timings.ts); from the response head on. */
  get timings(): RequestTimings | undefined {
    return this.#timings;
  }

  get rawHeaders(): Buffer[] | null {
    return toBuffers(this.#rawHeaders);
  }
  get rawTrailers(): Buffer[] | null {
    return toBuffers(this.#rawTrailers);
  }

  protected override onAbort(): void {
    if ((this.#flags & BODY_FAILED) !== 0) control.failBody(this.id);
    else control.abort(this.id);
  }

  /**
   * The streamed body's source failed after some of it was handed over: the request is aborted
   * with `err`, and what the engine holds of the body is still written (as undici leaves what it
   * wrote on the socket) before the connection closes.
   */
  abortBody(err: Error): void {
    // Once the body's end was given, there is nothing left to write: a plain abort.
    if ((this.#flags & BODY_COMPLETE) === 0) this.#flags |= BODY_FAILED;
    this.abort(err);
  }

  protected override onPause(): void {
    control.pause(this.id);
  }

  protected override onResume(): void {
    control.resume(this.id);
  }

  /** Dispatched with RequestFlag.WEBSOCKET. */
  holdForWebSocket(): void {
    this.#flags |= WEBSOCKET;
  }

  /** Re-sends a pause the engine could not see yet (made before the request was dispatched). */
  syncPause(): void {
    if (this.paused && !this.done) control.pause(this.id);
  }

  protected override onFail(err: Error): void {
    if (this.trace !== null) this.trace.error(err, this.aborted);
  }

  protected onSettled(err: Error | null): void {
    if ((this.#flags & TUNNELLED) === 0) closeRequest(this.id);
    this.#owner.requestDone(this.aborted);
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    waiter?.();
    const onSettle = this.onSettle;
    this.onSettle = null;
    onSettle?.(err);
  }

  /**
   * Streams a piece of the request body into the engine; false: await `drained()` first.
   * onBodySent hears `given`, the chunk as the caller's source gave it (undici hands it on as is).
   */
  writeBody(chunk: Buffer, given: unknown = chunk): boolean {
    const ok = control.write(this.id, chunk);
    if (this.trace !== null) this.trace.bodyChunk(chunk);
    try {
      this.handler.onBodySent?.(given as Buffer);
    } catch (err) {
      this.abort(err as Error);
    }
    return ok;
  }

  endBody(): void {
    this.#flags |= BODY_COMPLETE;
    control.end(this.id);
    if (this.trace !== null) this.trace.bodyEnded();
  }

  /** The request was handed over whole (no body, or a buffered one). */
  bodyComplete(body: Buffer | null): void {
    this.sentBody = body !== null && body.length > 0 ? body : null;
    this.#flags |= BODY_COMPLETE;
  }

  /**
   * A response has begun, so the request was sent: onBodySent (buffered bodies) and
   * onRequestSent, once, then onResponseStarted for each response head. False: a hook threw
   * (and aborted the request). (TypeScript-private, not `#`: a `#` method costs each instance a
   * slot.) Hooks here and below are called inside try/catch rather than through a closure: they
   * run on every response.
   */
  private responseBegins(): boolean {
    const handler = this.handler;
    try {
      if ((this.#flags & SENT_REPORTED) === 0) {
        this.#flags |= SENT_REPORTED;
        const body = this.sentBody;
        this.sentBody = null;
        if (body !== null) handler.onBodySent?.(body);
        if ((this.#flags & BODY_COMPLETE) !== 0) handler.onRequestSent?.();
      }
      handler.onResponseStarted?.();
      return true;
    } catch (err) {
      this.abort(err as Error);
      return false;
    }
  }

  /** Resolves when the engine wants more body, or the request settled. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.done) resolve();
      else this.#drainWaiter = resolve;
    });
  }

  onEngineBodyDrain(): void {
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    waiter?.();
  }

  onEngineUpgrade(status: number, reason: string, headers: IncomingHeaders, raw: string[], addrs: string): void {
    if (this.done || !this.responseBegins()) return;
    this.#rawHeaders = raw;
    // undici publishes the head of a CONNECT / upgrade answer too (Request.onRequestUpgrade).
    if (this.trace !== null) this.trace.responseHeaders(status, reason, raw, headers);
    const socket = new EngineSocket(this.id, addrs, (this.#flags & WEBSOCKET) !== 0);
    // The request is complete for its dispatcher; the engine routes the tunnel's bytes to the socket.
    routeRequest(this.id, socket);
    this.#flags |= TUNNELLED;
    this.detach();
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

  onEngineHead(status: number, reason: string, headers: IncomingHeaders, raw: string[], timings: LiveTimings | undefined): void {
    if (this.done || !this.responseBegins()) return;
    this.#rawHeaders = raw;
    // Each head's are the latest (a body held for a 100 was sent after the 1xx's head).
    this.#timings = timings;
    if (this.trace !== null && status >= 200) this.trace.responseHeaders(status, reason, raw, headers);
    if (status >= 200) this.#owner.altSvc?.learn(headers['alt-svc']);
    try {
      this.handler.onResponseStart?.(this, status, headers, reason);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  onEngineData(chunk: Buffer): void {
    if (this.done) return;
    if (this.trace !== null) this.trace.bodyChunkReceived(chunk);
    try {
      this.handler.onResponseData?.(this, chunk);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  onEngineEnd(trailers: IncomingHeaders, raw: string[], ended: number): void {
    if (this.done) return;
    this.#rawTrailers = raw;
    if (this.#timings !== undefined) this.#timings.end = ended;
    if (this.trace !== null) this.trace.trailers(raw);
    this.end(trailers);
  }

  onEngineError(code: number, errno: string, message: string, socket: string): void {
    this.fail(engineError(code, errno, message, socket));
  }

  onEngineSent(addrs: string): void {
    if (this.trace !== null && !this.done) this.trace.sent(addrs);
  }

  onEngineRetry(): void {
    // Re-sent on a new connection after the one it was on failed before any response byte.
    if (!this.done) this.start();
  }
}
