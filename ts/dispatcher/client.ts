// Client: one connection to one origin (undici's Client), served by the engine.
import type { UrlObject } from '../core/url.js';
import { EngineDispatcher, type EngineDispatcherOptions } from './engine/engine-dispatcher.js';
import { NotSupportedError, type SocketInfo as ErrorSocketInfo } from '../core/errors.js';
import { ClientStats } from './stats.js';
import type { EventSourceOptions as ClientEventSourceOptions } from '../eventsource/eventsource-options.js';

export type ClientOptions = EngineDispatcherOptions;

export class Client extends EngineDispatcher {
  readonly #pipelining: number;

  constructor(url: string | URL | UrlObject, options: ClientOptions = {}) {
    super(url, options ?? {}, 1);
    this.#pipelining = options?.pipelining ?? 1;
    this.setWebSocketOptions(options?.webSocket);
    this.setEventSourceOptions(options?.eventSource);
  }

  /**
   * Requests sent on the connection before earlier ones are answered (the `pipelining` option;
   * 0: keep-alive off). Read-only: the engine's connection takes it when the client is made.
   */
  get pipelining(): number {
    return this.#pipelining;
  }

  /** Always throws (typed `never` so that TypeScript refuses the assignment): see the getter. */
  set pipelining(_value: never) {
    throw new NotSupportedError('pipelining is fixed when the Client is made; pass it to the constructor');
  }

  override get stats(): ClientStats {
    return new ClientStats(this.engineStats());
  }
}

// undici's companion types, reached through the class (`Client.Options`, `Client.SocketInfo`).
export declare namespace Client {
  export type Options = ClientOptions;
  export type SocketInfo = ErrorSocketInfo;
  export type EventSourceOptions = ClientEventSourceOptions;
}
