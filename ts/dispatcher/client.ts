// Client: one connection to one origin (undici's Client), served by the engine.
import type { UrlObject } from '../core/url.js';
import { EngineDispatcher, type EngineDispatcherOptions } from './engine/engine-dispatcher.js';
import type { SocketInfo as ErrorSocketInfo } from '../core/errors.js';

export type ClientOptions = EngineDispatcherOptions;

export class Client extends EngineDispatcher {
  constructor(url: string | URL | UrlObject, options: ClientOptions = {}) {
    super(url, options ?? {}, 1);
    this.setWebSocketOptions(options?.webSocket);
    this.setEventSourceOptions(options?.eventSource);
  }
}

// undici's companion types, reached through the class (`Client.Options`, `Client.SocketInfo`).
export declare namespace Client {
  export type Options = ClientOptions;
  export type SocketInfo = ErrorSocketInfo;
}
