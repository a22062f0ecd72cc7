// Agent: routes each request by its origin to a Pool (or a Client when connections is 1),
// created on first use through `factory`.
import { InvalidArgumentError, MaxOriginsReachedError } from '../core/errors.js';
import type { Dispatcher } from './dispatcher.js';
import { DispatcherBase } from './dispatcher-base.js';
import { Client } from './client.js';
import { Pool, type PoolOptions } from './pool.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import type { ClientStats, PoolStats } from './stats.js';
import { failUnstarted } from '../handler/detached-controller.js';
import { GlobalCap, type GlobalPoolStats } from './global-cap.js';

export interface AgentOptions extends Omit<PoolOptions, 'factory'> {
  /** Makes the dispatcher for an origin, given as the request's `origin` option (a string or a URL). */
  factory?: (origin: string | URL, opts: object) => Dispatcher;
  maxOrigins?: number;
  /** ferro: at most this many sockets across all origins; requests over it wait (README, "A global connection cap"). */
  maxGlobalConnections?: number | null;
  /** ferro: ms a request may wait for a connection under `maxGlobalConnections` before it fails with QueueTimeoutError; 0 (the default) waits forever. */
  maxQueueTime?: number | null;
}

const MAX_REMEMBERED_ORIGINS = 1024;

function defaultFactory(origin: string, opts: AgentOptions): Dispatcher {
  return opts.connections === 1 ? new Client(origin, opts) : new Pool(origin, opts as PoolOptions);
}

export class Agent extends DispatcherBase {
  readonly #opts: AgentOptions;
  readonly #dispatchers = new Map<string, Dispatcher>();
  /** `origin` as requests spell it → its normalized origin (see #originOf). */
  readonly #origins = new Map<string, string>();
  /** maxGlobalConnections (global-cap.ts); null without it. */
  readonly #cap: GlobalCap | null;

  constructor(opts: AgentOptions = {}) {
    super();
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('Argument opts must be an object.');
    if (opts.factory != null && typeof opts.factory !== 'function') {
      throw new InvalidArgumentError('factory must be a function.');
    }
    const connect = (opts as { connect?: unknown }).connect;
    if (connect != null && typeof connect !== 'function' && typeof connect !== 'object') {
      throw new InvalidArgumentError('connect must be a function or an object');
    }
    if (opts.maxOrigins != null && (!Number.isInteger(opts.maxOrigins) || opts.maxOrigins < 1)) {
      throw new InvalidArgumentError('maxOrigins must be a number greater than 0');
    }
    const cap = opts.maxGlobalConnections;
    if (cap != null && (!Number.isInteger(cap) || cap < 1)) {
      throw new InvalidArgumentError('maxGlobalConnections must be a positive integer');
    }
    const wait = opts.maxQueueTime;
    if (wait != null && (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0)) {
      throw new InvalidArgumentError('maxQueueTime must be a non-negative number');
    }
    if (wait != null && wait > 0 && cap == null) {
      throw new InvalidArgumentError('maxQueueTime needs maxGlobalConnections');
    }
    this.setWebSocketOptions(opts.webSocket);
    this.setEventSourceOptions(opts.eventSource);
    this.#opts = { ...opts };
    this.#cap = cap == null ? null : new GlobalCap(cap, wait ?? 0);
  }

  /**
   * Stats of each origin's dispatcher (those that report any), keyed by origin. With
   * `maxGlobalConnections`: each origin's and the `total` of all (GlobalPoolStats).
   */
  get stats(): Record<string, PoolStats | ClientStats | GlobalPoolStats> {
    if (this.#cap !== null) return this.#cap.stats();
    const all: Record<string, PoolStats | ClientStats> = {};
    for (const [origin, d] of this.#dispatchers) {
      const s = (d as { stats?: PoolStats | ClientStats }).stats;
      if (s !== undefined) all[origin] = s;
    }
    return all;
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (opts?.origin == null) throw new InvalidArgumentError('opts.origin must be a non-empty string or URL.');
    let key = this.#originOf(opts.origin);
    // A per-request TLS name (the dns interceptor sends requests to an address but verifies the
    // host name) gets a pool of its own, configured with that name.
    const servername = key.startsWith('https:') && typeof opts.servername === 'string' ? opts.servername : null;
    const origin = key;
    if (servername !== null) key = `${key}#${servername}`;
    // `allowH2: false` on a request (undici's: a WebSocket handshake the origin's h2 connection
    // cannot carry) goes to an HTTP/1.1-only dispatcher of its own for that origin.
    const h1Only = opts.allowH2 === false && this.#opts.allowH2 !== false;
    if (h1Only) key = `${key}#http1-only`;
    const refused = this.refusal(opts);
    if (refused !== null) throw refused;
    let d = this.#dispatchers.get(key);
    if (d === undefined) {
      const max = this.#opts.maxOrigins ?? Infinity;
      if (this.#dispatchers.size >= max) {
        return failUnstarted(handler, new MaxOriginsReachedError());
      }
      const connect = this.#opts.connect;
      const named = servername !== null && typeof connect !== 'function' ? { connect: { ...connect, servername } } : {};
      const given = {
        ...this.#opts,
        factory: undefined,
        maxOrigins: undefined,
        maxGlobalConnections: undefined,
        maxQueueTime: undefined,
        ...named,
        ...(h1Only ? { allowH2: false } : null),
        ...this.#cap?.poolOptions(),
      };
      // A factory of the caller's gets `origin` as the request gave it (a URL stays a URL), as undici.
      d = this.#opts.factory != null ? this.#opts.factory(opts.origin, given) : defaultFactory(origin, given);
      const forward =
        (event: string) =>
        (origin: URL, targets: Dispatcher[], err?: Error): void => {
          this.emit(event, origin, [this, ...targets], err);
        };
      const dispatcher = d;
      // A dispatcher left with no connection and no request gives its origin slot back
      // (maxOrigins counts origins in use); the next request there creates a new one.
      const dropIfUnused = (): void => {
        const s = (dispatcher as { stats?: PoolStats | ClientStats }).stats;
        // A Client's `connected` is a boolean (ClientStats), a Pool's a count.
        if (this.#dispatchers.get(key) !== dispatcher || s === undefined || Number(s.connected) > 0 || s.size > 0) return;
        this.#dispatchers.delete(key);
        this.#cap?.forget(key);
        // 'disconnect' may come after the Agent destroyed this dispatcher: its close() then
        // refuses (ClientDestroyedError), and with nothing left to give back that is no error.
        dispatcher.close().catch(() => {});
      };
      d.on('connect', forward('connect'));
      d.on('disconnect', forward('disconnect'));
      d.on('connectionError', forward('connectionError'));
      // Checked after the engine's whole batch: requests failing with the connection settle after the event.
      d.on('disconnect', () => queueMicrotask(dropIfUnused));
      d.on('connectionError', () => queueMicrotask(dropIfUnused));
      d.on('drain', (origin: URL, targets: Dispatcher[]) => this.emit('drain', origin, [this, ...targets]));
      this.#dispatchers.set(key, d);
    }
    return this.#cap === null ? d.dispatch(opts, handler) : this.#cap.dispatch(key, origin, d, opts, handler);
  }

  /**
   * The origin a request's `origin` names. Parsing a URL costs ~2.5 µs, a large share of a small
   * request: each distinct spelling is parsed once and remembered (a URL object by its href).
   */
  #originOf(origin: string | URL): string {
    const raw = origin instanceof URL ? origin.href : String(origin);
    let key = this.#origins.get(raw);
    if (key === undefined) {
      try {
        key = new URL(raw).origin;
      } catch {
        throw new InvalidArgumentError('opts.origin must be a valid URL.');
      }
      // Bounded: a caller spelling origins with ever-new paths must not grow this without end.
      if (this.#origins.size >= MAX_REMEMBERED_ORIGINS) this.#origins.clear();
      this.#origins.set(raw, key);
    }
    return key;
  }

  protected onClose(): Promise<void> {
    this.#cap?.close();
    // As undici: a dispatcher that finished closing is destroyed.
    return Promise.all([...this.#dispatchers.values()].map((d) => d.close())).then(() => this.markDestroyed());
  }

  protected onDestroy(err: Error | null): Promise<unknown> {
    this.#cap?.close();
    return Promise.all([...this.#dispatchers.values()].map((d) => d.destroy(err)));
  }
}

// undici's companion type, reached through the class (`Agent.Options`).
export declare namespace Agent {
  export type Options = AgentOptions;
}
