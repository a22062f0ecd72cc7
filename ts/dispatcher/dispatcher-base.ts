// The base of every dispatcher that owns what it serves (engine pools, agents, balancers, proxy
// agents, mocks): closed / destroyed state, the call forms of close() and destroy() — a promise
// when no callback is given, otherwise `callback(err, null)`; destroy takes an optional error
// first — their argument checks, and the checks every dispatch() begins with.
import { ClientClosedError, ClientDestroyedError, InvalidArgumentError } from '../core/errors.js';
import { assertHandlerObject } from '../core/request.js';
import type { DispatchHandler } from '../core/types.js';
import { Dispatcher } from './dispatcher.js';
import { DEFAULT_LIMITS, resolveLimits, type WebSocketLimits, type WebSocketOptions } from '../websocket/limits.js';
import { DEFAULT_EVENT_SOURCE_OPTIONS, resolveEventSourceOptions, type EventSourceOptions } from '../eventsource/eventsource-options.js';

export type LifecycleCallback = (err: Error | null, data: null) => void;

/** Answers a close/destroy in the form it was called in. */
function answer(done: Promise<unknown>, callback: LifecycleCallback | undefined): Promise<void> | void {
  const settled = done.then(() => undefined);
  if (callback === undefined) return settled;
  settled.then(
    () => callback(null, null),
    (err: Error) => callback(err, null),
  );
}

/** Refuses a close/destroy (close() on a destroyed dispatcher) in the form it was called in. */
function refuse(err: Error, callback: LifecycleCallback | undefined): Promise<void> | void {
  if (callback === undefined) return Promise.reject(err);
  queueMicrotask(() => callback(err, null));
}

export abstract class DispatcherBase extends Dispatcher {
  #closed = false;
  #destroyed = false;
  #webSocket: Readonly<WebSocketLimits> = DEFAULT_LIMITS;

  /**
   * undici's getter: the limits of WebSocket connections made through this dispatcher — undici's
   * two, and ferro's `stalledWriteTimeout` only when it was given.
   */
  get webSocketOptions(): WebSocketOptions {
    const { maxFragments, maxPayloadSize, stalledWriteTimeout } = this.#webSocket;
    return this.#stallGiven ? { maxFragments, maxPayloadSize, stalledWriteTimeout } : { maxFragments, maxPayloadSize };
  }
  #stallGiven = false;

  /** Takes the `webSocket` option (undici's, on every dispatcher that has options). */
  protected setWebSocketOptions(opts: unknown): void {
    if (opts == null) return;
    if (typeof opts !== 'object') throw new InvalidArgumentError('webSocket must be an object');
    this.#webSocket = resolveLimits(opts as WebSocketOptions, null, (message) => new InvalidArgumentError(message));
    this.#stallGiven = (opts as WebSocketOptions).stalledWriteTimeout != null;
  }

  #eventSource: Readonly<Required<EventSourceOptions>> = DEFAULT_EVENT_SOURCE_OPTIONS;

  /** undici's getter: the limits EventSources made through this dispatcher parse with. */
  get eventSourceOptions(): Required<EventSourceOptions> {
    return { ...this.#eventSource };
  }

  /** Takes the `eventSource` option (undici's, beside `webSocket`). */
  protected setEventSourceOptions(opts: unknown): void {
    this.#eventSource = resolveEventSourceOptions(opts);
  }

  get closed(): boolean {
    return this.#closed;
  }
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Whether close() on a destroyed dispatcher fails with ClientDestroyedError, as undici's own
   * dispatchers do; mocks answer it (a test and its cleanup may both close).
   */
  protected get refusesCloseWhenDestroyed(): boolean {
    return true;
  }

  /** Runs for each accepted close(); settles when what this dispatcher owns has closed. */
  protected abstract onClose(): Promise<unknown>;

  /** Runs for each destroy(); `err` (null when none was given) fails what is in flight. */
  protected abstract onDestroy(err: Error | null): Promise<unknown>;

  /** A dispatcher whose close finished is destroyed. */
  protected markDestroyed(): void {
    this.#closed = true;
    this.#destroyed = true;
  }

  close(): Promise<void>;
  close(callback: LifecycleCallback): void;
  close(callback?: LifecycleCallback): Promise<void> | void {
    if (callback !== undefined && typeof callback !== 'function') throw new InvalidArgumentError('invalid callback');
    if (this.#destroyed && this.refusesCloseWhenDestroyed) return refuse(new ClientDestroyedError(), callback);
    this.#closed = true;
    return answer(this.onClose(), callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: LifecycleCallback): void;
  destroy(err: Error | null, callback: LifecycleCallback): void;
  destroy(a?: unknown, b?: unknown): Promise<void> | void {
    const callback = (typeof a === 'function' ? a : b) as LifecycleCallback | undefined;
    if (callback !== undefined && typeof callback !== 'function') throw new InvalidArgumentError('invalid callback');
    this.markDestroyed();
    return answer(this.onDestroy(a instanceof Error ? a : null), callback);
  }

  /** The guard every dispatch() begins with (core/request.ts). */
  protected checkHandler(handler: unknown): asserts handler is DispatchHandler {
    assertHandlerObject(handler);
  }

  /** Why this dispatcher cannot take a request with `opts` now, or null when it can. */
  protected refusal(opts: unknown): Error | null {
    if (opts === null || typeof opts !== 'object') return new InvalidArgumentError('opts must be an object.');
    if (this.#destroyed) return new ClientDestroyedError();
    if (this.#closed) return new ClientClosedError();
    return null;
  }
}
