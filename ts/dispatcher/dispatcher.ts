// The Dispatcher base: an EventEmitter whose subclasses implement dispatch/close/destroy; every
// higher-level operation (request, stream, ...) is built on dispatch.
import { EventEmitter } from 'node:events';
import { request as apiRequest } from '../api/request.js';
import type {
  DispatchFn,
  DispatchHandler,
  DispatchOptions,
  DispatcherComposeInterceptor,
  RequestOptions,
  ResponseData,
} from './types.js';

export type Callback<T> = (err: Error | null, data: T) => void;

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
      dispatch = interceptor(dispatch);
      if (dispatch == null || typeof dispatch !== 'function' || dispatch.length !== 2) {
        throw new TypeError('invalid interceptor');
      }
    }
    return new ComposedDispatcher(this, dispatch);
  }
}

/** A dispatcher whose dispatch runs through an interceptor chain; lifecycle calls go to the wrapped one. */
export class ComposedDispatcher extends Dispatcher {
  readonly #inner: Dispatcher;
  readonly #dispatch: DispatchFn;

  constructor(inner: Dispatcher, dispatch: DispatchFn) {
    super();
    this.#inner = inner;
    this.#dispatch = dispatch;
  }

  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean {
    return this.#dispatch(options, handler);
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    return (this.#inner.close as (cb?: () => void) => Promise<void> | void).call(this.#inner, callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(...args: unknown[]): Promise<void> | void {
    return (this.#inner.destroy as (...a: unknown[]) => Promise<void> | void).apply(this.#inner, args);
  }
}
