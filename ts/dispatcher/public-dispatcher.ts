// Dispatcher as the package exports it. undici's base class is constructible (`new Dispatcher()`,
// or a subclass that implements only what it needs; the base's dispatch / close / destroy throw
// "not implemented", as ferro's do at run time). Inside ferro the class stays abstract so that
// every dispatcher of its own must implement them; this gives the same class undici's face.
import { Dispatcher as Base } from './dispatcher.js';

export interface DispatcherConstructor {
  new (): Dispatcher;
  readonly prototype: Dispatcher;
}

export const Dispatcher = Base as unknown as DispatcherConstructor;
// An interface over the class: the same members, the three below declared anew so that they are
// not abstract to a subclass (it overrides what it needs; the rest throw "not implemented").
export interface Dispatcher extends Base {
  dispatch(options: Base.DispatchOptions, handler: Base.DispatchHandler): boolean;
  close(): Promise<void>;
  close(callback: () => void): void;
  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
}

// The companion types, reached as `Dispatcher.DispatchOptions` and so on.
export declare namespace Dispatcher {
  export type DispatchOptions = Base.DispatchOptions;
  export type DispatchHandler = Base.DispatchHandler;
  export type DispatchController = Base.DispatchController;
  export type DispatchInterceptor = Base.DispatchInterceptor;
  export type HttpMethod = Base.HttpMethod;
  export type RequestOptions<TOpaque = null> = Base.RequestOptions<TOpaque>;
  export type ResponseData<TOpaque = null> = Base.ResponseData<TOpaque>;
  export type StreamFactoryData<TOpaque = null> = Base.StreamFactoryData<TOpaque>;
  export type StreamFactory<TOpaque = null> = Base.StreamFactory<TOpaque>;
  export type StreamData<TOpaque = null> = Base.StreamData<TOpaque>;
  export type PipelineOptions<TOpaque = null> = Base.PipelineOptions<TOpaque>;
  export type PipelineHandlerData<TOpaque = null> = Base.PipelineHandlerData<TOpaque>;
  export type PipelineHandler<TOpaque = null> = Base.PipelineHandler<TOpaque>;
  export type DispatcherComposeInterceptor = Base.DispatcherComposeInterceptor;
  export type Dispatch = Base.Dispatch;
  export type ConnectOptions<TOpaque = null> = Base.ConnectOptions<TOpaque>;
  export type ConnectData<TOpaque = null> = Base.ConnectData<TOpaque>;
  export type UpgradeOptions = Base.UpgradeOptions;
  export type UpgradeData<TOpaque = null> = Base.UpgradeData<TOpaque>;
  export type ComposedDispatcher = Base.ComposedDispatcher;
  export type BodyMixin = Base.BodyMixin;
}
