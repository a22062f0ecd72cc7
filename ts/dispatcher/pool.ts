// Pool: up to `connections` connections to one origin (undici's Pool), served by the engine.
// With undici's `factory` or `clientTtl` options the pool is made of Client objects instead (the
// caller wants to build or retire them): those requests go to the first free Client (PoolClients).
import { InvalidArgumentError } from '../core/errors.js';
import type { UrlObject } from '../core/url.js';
import type { Dispatcher } from './dispatcher.js';
import { EngineDispatcher, type EngineDispatcherOptions } from './engine/engine-dispatcher.js';
import { RoundRobinPool } from './round-robin-pool.js';
import type { PoolStats } from './stats.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import type { PoolStats as Stats } from './stats.js';

export interface PoolOptions extends EngineDispatcherOptions {
  /** Maximum connections; null (the default) for no limit. */
  connections?: number | null;
  /** Makes each connection's Client (undici's option); the pool is then made of Clients. */
  factory?: (origin: URL, opts: object) => Dispatcher;
  /** Milliseconds a Client stays in use after it connected (undici's option); implies Clients. */
  clientTtl?: number | null;
}

/** The Clients of a Pool made with `factory` / `clientTtl`: each request goes to the first that is not busy (undici's Pool). */
class PoolClients extends RoundRobinPool {
  protected override get inTurn(): boolean {
    return false;
  }
}

export class Pool extends EngineDispatcher {
  readonly #clients: RoundRobinPool | null;

  constructor(url: string | URL | UrlObject, options: PoolOptions = {}) {
    const connections = options?.connections ?? 0;
    if (typeof connections !== 'number' || !Number.isInteger(connections) || connections < 0) {
      throw new InvalidArgumentError('invalid connections');
    }
    const { factory, clientTtl, ...engineOptions } = options ?? {};
    // Before the origin is read, in undici's order.
    if (factory != null && typeof factory !== 'function') throw new InvalidArgumentError('factory must be a function.');
    // Made of Clients, it has no engine pool of its own: each Client has one.
    super(url, engineOptions, connections, factory == null && clientTtl == null);
    this.setWebSocketOptions(engineOptions.webSocket);
    this.setEventSourceOptions(engineOptions.eventSource);
    if (factory == null && clientTtl == null) {
      this.#clients = null;
      return;
    }
    const clients = new PoolClients(url, { ...engineOptions, connections: connections || null, factory, clientTtl });
    for (const event of ['connect', 'disconnect', 'connectionError', 'drain'] as const) {
      clients.on(event, (origin: URL, targets: Dispatcher[], err?: Error) =>
        this.emit(event, origin, [this, ...targets.slice(1)], err),
      );
    }
    this.#clients = clients;
  }

  override get stats(): PoolStats {
    return this.#clients?.stats ?? this.engineStats();
  }

  override dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    return this.#clients === null ? super.dispatch(opts, handler) : this.#clients.dispatch(opts, handler);
  }

  protected override onClose(): Promise<void> {
    if (this.#clients !== null) void this.#clients.close().catch(() => {});
    return super.onClose();
  }

  protected override onDestroy(err: Error | null): Promise<void> {
    if (this.#clients !== null) void this.#clients.destroy(err).catch(() => {});
    return super.onDestroy(err);
  }
}

// undici's companion types, reached through the class (`Pool.Options`, `Pool.PoolStats`).
export declare namespace Pool {
  export type Options = PoolOptions;
  export type PoolStats = Stats;
}
