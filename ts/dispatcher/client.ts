// Client: one connection to one origin (undici's Client), served by the engine.
import type { UrlObject } from '../core/url.js';
import { EngineDispatcher, type EngineDispatcherOptions } from './engine/engine-dispatcher.js';

export type ClientOptions = EngineDispatcherOptions;

export class Client extends EngineDispatcher {
  constructor(url: string | URL | UrlObject, options: ClientOptions = {}) {
    super(url, options ?? {}, 1);
    this.setWebSocketOptions(options?.webSocket);
  }
}
