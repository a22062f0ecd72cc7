// RoundRobinPool (undici 8): Clients to one origin, made on demand up to `connections`, each
// request given to the next Client in turn that is not busy. Requests wait in a queue here when
// every Client is busy and no more may be made. `clientTtl` retires a Client that has been
// connected longer than that many milliseconds when its turn comes.
import { ClientDestroyedError, InvalidArgumentError } from '../core/errors.js';
import { parseOrigin, type UrlObject } from '../core/url.js';
import { failUnstarted } from '../handler/detached-controller.js';
import { Client, type ClientOptions } from './client.js';
import type { Dispatcher } from './dispatcher.js';
import { DispatcherBase } from './dispatcher-base.js';
import { addStats, emptyStats, type PoolStats } from './stats.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { spread } from '../core/spread.js';
import type { PoolStats as Stats } from './stats.js';

export interface RoundRobinPoolOptions extends ClientOptions {
  /** Makes each Client; default `new Client(origin, opts)`. */
  factory?: (origin: URL, opts: object) => Dispatcher;
  /** The most Clients to make; null (the default) for no limit. */
  connections?: number | null;
  /** Milliseconds a Client may stay in use after it connected; null (the default) for no limit. */
  clientTtl?: number | null;
}

interface Member {
  dispatcher: Dispatcher;
  busy: boolean;
  /** When it last connected, for clientTtl. */
  connectedAt: number | null;
}

export class RoundRobinPool extends DispatcherBase {
  readonly #origin: URL;
  readonly #opts: object;
  readonly #factory: (origin: URL, opts: object) => Dispatcher;
  readonly #connections: number | null;
  readonly #clientTtl: number | null;
  #members: Member[] = [];
  #index = -1;
  #queue: [DispatchOptions, DispatchHandler][] = [];
  #needDrain = false;
  #closeWaiters: (() => void)[] = [];

  constructor(origin: string | URL | UrlObject, options: RoundRobinPoolOptions = {}) {
    super();
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('invalid options');
    const { factory, connections, clientTtl, ...rest } = options;
    this.setWebSocketOptions(rest.webSocket);
    this.setEventSourceOptions(rest.eventSource);
    if (connections != null && (typeof connections !== 'number' || !Number.isFinite(connections) || connections < 0)) {
      throw new InvalidArgumentError('invalid connections');
    }
    if (factory != null && typeof factory !== 'function') throw new InvalidArgumentError('factory must be a function.');
    const connect = (rest as { connect?: unknown }).connect;
    if (connect != null && typeof connect !== 'function' && typeof connect !== 'object') {
      throw new InvalidArgumentError('connect must be a function or an object');
    }
    if (clientTtl != null && (typeof clientTtl !== 'number' || !Number.isFinite(clientTtl) || clientTtl < 0)) {
      throw new InvalidArgumentError('invalid clientTtl');
    }
    this.#origin = parseOrigin(origin);
    this.#opts = rest;
    this.#factory = factory ?? ((o, opts) => new Client(o, opts as ClientOptions));
    this.#connections = connections || null;
    this.#clientTtl = clientTtl || null;
  }

  protected override get composeOrigin(): string {
    return this.#origin.origin;
  }

  /** The Clients' stats added up, with the requests waiting here counted as pending. */
  get stats(): PoolStats {
    const total = emptyStats();
    for (const m of this.#members) {
      const s = (m.dispatcher as { stats?: PoolStats }).stats;
      if (s !== undefined) addStats(total, s);
    }
    const waiting = this.#queue.length;
    return addStats(total, { connected: 0, free: 0, pending: waiting, queued: waiting, running: 0, size: waiting });
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    const refused = this.refusal(opts);
    if (refused !== null) return failUnstarted(handler, refused);
    const member = this.#queue.length === 0 ? this.#pick() : null;
    if (member === null) {
      this.#queue.push([opts, handler]);
      this.#needDrain = true;
      return false;
    }
    this.#send(member, opts, handler);
    return !this.#needDrain;
  }

  /**
   * Whether requests go to the Clients in turn (RoundRobinPool) or to the first that is not busy
   * (undici's Pool, which Pool's `factory` / `clientTtl` form is built on).
   */
  protected get inTurn(): boolean {
    return true;
  }

  /** A Client that is not busy, a new one when allowed, or null. */
  #pick(): Member | null {
    const free = this.#free();
    if (free !== null || !this.#canAdd()) return free;
    const added = this.#add();
    this.#index = this.#members.length - 1;
    return added;
  }

  /** The next Client in turn (or the first) that is not busy; expired ones are retired on the way. */
  #free(): Member | null {
    const inTurn = this.inTurn;
    let i = inTurn ? this.#index : -1;
    for (let checked = 0; checked < this.#members.length; ) {
      i = (i + 1) % this.#members.length;
      const m = this.#members[i]!;
      if (this.#expired(m)) {
        this.#retire(m);
        i--;
        continue;
      }
      checked++;
      if (m.busy) continue;
      if (inTurn) this.#index = i;
      return m;
    }
    return null;
  }

  #canAdd(): boolean {
    return this.#connections === null || this.#members.length < this.#connections;
  }

  #expired(m: Member): boolean {
    return this.#clientTtl !== null && m.connectedAt !== null && Date.now() - m.connectedAt > this.#clientTtl;
  }

  #retire(m: Member): void {
    this.#members = this.#members.filter((x) => x !== m);
    // Requests it still has complete; it takes no new ones.
    void m.dispatcher.close().catch(() => {});
  }

  #add(): Member {
    const dispatcher = this.#factory(this.#origin, { ...this.#opts });
    const m: Member = { dispatcher, busy: false, connectedAt: null };
    const forward =
      (event: string) =>
      (origin: URL, targets: Dispatcher[], err?: Error): void => {
        this.emit(event, origin, [this, ...targets], err);
      };
    dispatcher.on('connect', (origin: URL, targets: Dispatcher[]) => {
      m.connectedAt = Date.now();
      this.emit('connect', origin, [this, ...targets]);
    });
    dispatcher.on('disconnect', forward('disconnect'));
    dispatcher.on('connectionError', forward('connectionError'));
    dispatcher.on('drain', () => {
      m.busy = false;
      this.#flush();
    });
    this.#members.push(m);
    return m;
  }

  #send(m: Member, opts: DispatchOptions, handler: DispatchHandler): void {
    if (m.dispatcher.dispatch(spread(opts, { origin: this.#origin.origin }), handler)) return;
    m.busy = true;
    // As undici: the pool reports backpressure only when no other Client is free and no new one
    // may be made (one is made now when allowed, ready for the next request).
    if (this.#members.some((x) => !x.busy && !this.#expired(x))) return;
    if (this.#canAdd()) this.#add();
    else this.#needDrain = true;
  }

  /** Hands waiting requests to free Clients; emits drain once nothing waits. */
  #flush(): void {
    while (this.#queue.length > 0) {
      const m = this.#pick();
      if (m === null) return;
      const [opts, handler] = this.#queue.shift()!;
      this.#send(m, opts, handler);
    }
    if (this.#needDrain && !this.destroyed) {
      this.#needDrain = false;
      this.emit('drain', this.#origin, [this]);
    }
    if (this.closed) this.#finishClose();
  }

  #finishClose(): void {
    if (this.#queue.length > 0 || this.#closeWaiters.length === 0) return;
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    void Promise.all(this.#members.map((m) => m.dispatcher.close().catch(() => {}))).then(() => {
      this.markDestroyed();
      for (const w of waiters) w();
    });
  }

  protected onClose(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
      this.#finishClose();
    });
  }

  protected onDestroy(given: Error | null): Promise<void> {
    const err = given ?? new ClientDestroyedError();
    const queued = this.#queue;
    this.#queue = [];
    return Promise.all(this.#members.map((m) => m.dispatcher.destroy(err))).then(() => {
      for (const [, handler] of queued) failUnstarted(handler, err);
      for (const w of this.#closeWaiters.splice(0)) w();
    });
  }
}

// undici's companion types, reached through the class (`RoundRobinPool.Options`, …).
export declare namespace RoundRobinPool {
  export type Options = RoundRobinPoolOptions;
  export type RoundRobinPoolStats = Stats;
}
