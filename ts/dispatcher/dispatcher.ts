// The Dispatcher base: an EventEmitter whose subclasses implement dispatch/close/destroy; every
// higher-level operation (request, stream, ...) is built on dispatch.
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { request as apiRequest } from '../api/request.js';
import { stream as apiStream } from '../api/stream.js';
import { pipeline as apiPipeline } from '../api/pipeline.js';
import {
  connect as apiConnect,
  upgrade as apiUpgrade,
  type Callback,
  type ConnectData,
  type ConnectOptions,
  type UpgradeData,
  type UpgradeOptions,
  type ConnectData as TunnelConnectData,
  type ConnectOptions as TunnelConnectOptions,
  type UpgradeData as TunnelUpgradeData,
  type UpgradeOptions as TunnelUpgradeOptions,
} from '../api/tunnel.js';
import type { BodyReadable } from '../api/body.js';
import type {
  DispatchFn,
  DispatchHandler,
  DispatchOptions,
  DispatcherComposeInterceptor,
  PipelineHandler,
  PipelineOptions,
  RequestOptions,
  ResponseData,
  StreamData,
  StreamFactory,
} from '../core/types.js';
import type * as T from '../core/types.js';
import { checkComposeOrder } from './compose-order.js';
import { spread } from '../core/spread.js';
import { dispatcherLimits, type WebSocketOptions } from '../websocket/limits.js';
import type { EventSourceOptions } from '../eventsource/eventsource-options.js';
import type { UndiciError } from '../core/errors.js';

/** The events a dispatcher emits and their arguments, as undici types them. */
export interface DispatcherEvents {
  connect: (origin: URL, targets: readonly Dispatcher[]) => void;
  disconnect: (origin: URL, targets: readonly Dispatcher[], error: UndiciError) => void;
  connectionError: (origin: URL, targets: readonly Dispatcher[], error: UndiciError) => void;
  drain: (origin: URL) => void;
}
type DispatcherEvent = keyof DispatcherEvents;
/** Any other event, as EventEmitter takes it. */
type OtherListener = (...args: never[]) => void;

// Typed overloads for the dispatcher events, merged into the class (runtime: EventEmitter's own).
export interface Dispatcher {
  on<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  on(event: string | symbol, listener: OtherListener): this;
  once<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  once(event: string | symbol, listener: OtherListener): this;
  off<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  off(event: string | symbol, listener: OtherListener): this;
  addListener<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  addListener(event: string | symbol, listener: OtherListener): this;
  removeListener<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  removeListener(event: string | symbol, listener: OtherListener): this;
  prependListener<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  prependListener(event: string | symbol, listener: OtherListener): this;
  prependOnceListener<E extends DispatcherEvent>(event: E, listener: DispatcherEvents[E]): this;
  prependOnceListener(event: string | symbol, listener: OtherListener): this;
  listeners<E extends DispatcherEvent>(event: E): DispatcherEvents[E][];
  listeners(event: string | symbol): Function[];
  rawListeners<E extends DispatcherEvent>(event: E): DispatcherEvents[E][];
  rawListeners(event: string | symbol): Function[];
  emit<E extends DispatcherEvent>(event: E, ...args: Parameters<DispatcherEvents[E]>): boolean;
  emit(event: string | symbol, ...args: unknown[]): boolean;
}

export abstract class Dispatcher extends EventEmitter {
  abstract dispatch(options: DispatchOptions, handler: DispatchHandler): boolean;
  abstract close(): Promise<void>;
  abstract close(callback: () => void): void;
  abstract destroy(): Promise<void>;
  abstract destroy(err: Error | null): Promise<void>;
  abstract destroy(callback: () => void): void;
  abstract destroy(err: Error | null, callback: () => void): void;

  request<TOpaque = null>(options: RequestOptions<TOpaque>): Promise<ResponseData<TOpaque>>;
  request<TOpaque = null>(options: RequestOptions<TOpaque>, callback: Callback<ResponseData<TOpaque>>): void;
  request<TOpaque = null>(
    options: RequestOptions<TOpaque>,
    callback?: Callback<ResponseData<TOpaque>>,
  ): Promise<ResponseData<TOpaque>> | void {
    return apiRequest.call(this, options, callback as Callback<ResponseData<TOpaque>>) as
      | Promise<ResponseData<TOpaque>>
      | void;
  }

  stream<TOpaque = null>(options: RequestOptions<TOpaque>, factory: StreamFactory<TOpaque>): Promise<StreamData<TOpaque>>;
  stream<TOpaque = null>(
    options: RequestOptions<TOpaque>,
    factory: StreamFactory<TOpaque>,
    callback: Callback<StreamData<TOpaque>>,
  ): void;
  stream<TOpaque = null>(
    options: RequestOptions<TOpaque>,
    factory: StreamFactory<TOpaque>,
    callback?: Callback<StreamData<TOpaque>>,
  ): Promise<StreamData<TOpaque>> | void {
    return (apiStream<TOpaque>).call(this, options, factory, callback as Callback<StreamData<TOpaque>>) as
      | Promise<StreamData<TOpaque>>
      | void;
  }

  pipeline<TOpaque = null>(options: PipelineOptions<TOpaque>, handler: PipelineHandler<TOpaque>): Duplex {
    return (apiPipeline<TOpaque>).call(this, options, handler);
  }

  connect<TOpaque = null>(options: ConnectOptions<TOpaque>): Promise<ConnectData<TOpaque>>;
  connect<TOpaque = null>(options: ConnectOptions<TOpaque>, callback: Callback<ConnectData<TOpaque>>): void;
  connect<TOpaque = null>(
    options: ConnectOptions<TOpaque>,
    callback?: Callback<ConnectData<TOpaque>>,
  ): Promise<ConnectData<TOpaque>> | void {
    return (apiConnect<TOpaque>).call(this, options, callback);
  }

  upgrade<TOpaque = null>(options: UpgradeOptions): Promise<UpgradeData<TOpaque>>;
  upgrade<TOpaque = null>(options: UpgradeOptions, callback: Callback<UpgradeData<TOpaque>>): void;
  upgrade<TOpaque = null>(
    options: UpgradeOptions,
    callback?: Callback<UpgradeData<TOpaque>>,
  ): Promise<UpgradeData<TOpaque>> | void {
    return (apiUpgrade<TOpaque>).call(this, options, callback);
  }

  /**
   * Given to interceptors by compose (as undici does): the origin every request goes to, whatever
   * its `origin` option says (Client, Pool); undefined when each request goes to its own (Agent);
   * null when they go to one of several origins (BalancedPool), so none can be trusted.
   */
  protected get composeOrigin(): string | null | undefined {
    return undefined;
  }

  compose(interceptors: DispatcherComposeInterceptor[]): ComposedDispatcher;
  compose(...interceptors: DispatcherComposeInterceptor[]): ComposedDispatcher;
  compose(...args: (DispatcherComposeInterceptor | DispatcherComposeInterceptor[])[]): ComposedDispatcher {
    const list = (Array.isArray(args[0]) ? args[0] : args) as DispatcherComposeInterceptor[];
    let dispatch: DispatchFn = this.dispatch.bind(this);
    // The last interceptor wraps outermost, so it is the first to see a request.
    for (const interceptor of list) {
      if (interceptor == null) continue;
      if (typeof interceptor !== 'function') {
        throw new TypeError(`invalid interceptor, expected function received ${typeof interceptor}`);
      }
      // Like undici, interceptors also get the dispatcher's own origin (for requests without one).
      dispatch = (interceptor as (d: DispatchFn, origin?: string | null) => DispatchFn)(dispatch, this.composeOrigin);
      if (dispatch == null || typeof dispatch !== 'function' || dispatch.length !== 2) {
        throw new TypeError('invalid interceptor');
      }
    }
    checkComposeOrder(list);
    const origin = this.composeOrigin;
    if (typeof origin === 'string') {
      // As undici: a request without an origin is given the dispatcher's own, so interceptors
      // (redirect's `history`, say) see where it goes.
      const inner = dispatch;
      dispatch = (opts, handler) =>
        inner(opts !== null && typeof opts === 'object' && !opts.origin ? spread(opts, { origin }) : opts, handler);
    }
    return new ComposedDispatcher(this, dispatch);
  }
}

// undici's base class can be instantiated from JS and its own dispatch / close / destroy throw
// "not implemented"; here they stay abstract for TypeScript and throw the same at run time.
for (const name of ['dispatch', 'close', 'destroy'] as const) {
  Object.defineProperty(Dispatcher.prototype, name, {
    value: function notImplemented(): never {
      throw new Error('not implemented');
    },
    writable: true,
    configurable: true,
  });
}

/** A dispatcher in front of another: close and destroy (in every call form) go to the wrapped one. */
export abstract class DelegatingDispatcher extends Dispatcher {
  protected readonly inner: Dispatcher;

  constructor(inner: Dispatcher) {
    super();
    this.inner = inner;
  }

  /** The wrapped dispatcher's WebSocket limits (undici's wrappers forward them too). */
  get webSocketOptions(): WebSocketOptions | undefined {
    return dispatcherLimits(this.inner) ?? undefined;
  }

  /** The wrapped dispatcher's EventSource limits, likewise. */
  get eventSourceOptions(): EventSourceOptions | undefined {
    return (this.inner as { eventSourceOptions?: EventSourceOptions }).eventSourceOptions;
  }

  // Requests go where the wrapped dispatcher sends them.
  protected override get composeOrigin(): string | null | undefined {
    return (this.inner as unknown as { composeOrigin: string | null | undefined }).composeOrigin;
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    return (this.inner.close as (cb?: () => void) => Promise<void> | void).call(this.inner, callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(...args: unknown[]): Promise<void> | void {
    return (this.inner.destroy as (...a: unknown[]) => Promise<void> | void).apply(this.inner, args);
  }
}

/** A dispatcher whose dispatch runs through an interceptor chain; lifecycle calls go to the wrapped one. */
export class ComposedDispatcher extends DelegatingDispatcher {
  readonly #dispatch: DispatchFn;

  constructor(inner: Dispatcher, dispatch: DispatchFn) {
    super(inner);
    this.#dispatch = dispatch;
  }

  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean {
    return this.#dispatch(options, handler);
  }
}

type ComposedDispatcherInstance = ComposedDispatcher;

// undici's types are reached through the class (`Dispatcher.StreamData`, ...): the same names here.
export declare namespace Dispatcher {
  export type DispatchOptions = T.DispatchOptions;
  export type DispatchHandler = T.DispatchHandler;
  export type DispatchController = T.DispatchController;
  export type DispatchInterceptor = T.DispatcherComposeInterceptor;
  export type HttpMethod = T.HttpMethod;
  export type RequestOptions<TOpaque = null> = T.RequestOptions<TOpaque>;
  export type ResponseData<TOpaque = null> = T.ResponseData<TOpaque>;
  export type StreamFactoryData<TOpaque = null> = T.StreamFactoryData<TOpaque>;
  export type StreamFactory<TOpaque = null> = T.StreamFactory<TOpaque>;
  export type StreamData<TOpaque = null> = T.StreamData<TOpaque>;
  export type PipelineOptions<TOpaque = null> = T.PipelineOptions<TOpaque>;
  export type PipelineHandlerData<TOpaque = null> = T.PipelineHandlerData<TOpaque>;
  export type PipelineHandler<TOpaque = null> = T.PipelineHandler<TOpaque>;
  export type DispatcherComposeInterceptor = T.DispatcherComposeInterceptor;
  export type Dispatch = T.DispatchFn;
  export type ConnectOptions<TOpaque = null> = TunnelConnectOptions<TOpaque>;
  export type ConnectData<TOpaque = null> = TunnelConnectData<TOpaque>;
  export type UpgradeOptions = TunnelUpgradeOptions;
  export type UpgradeData<TOpaque = null> = TunnelUpgradeData<TOpaque>;
  export type ComposedDispatcher = ComposedDispatcherInstance;
  export type BodyMixin = Pick<BodyReadable, 'arrayBuffer' | 'blob' | 'bytes' | 'json' | 'text' | 'body' | 'bodyUsed'>;
}
