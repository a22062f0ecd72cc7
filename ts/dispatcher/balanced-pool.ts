// BalancedPool: one Pool per upstream origin, each request sent to one of them.
//
// Picking scheme (smooth weighted round-robin): every upstream has a weight, starting at
// `maxWeightPerServer`. A connection failure costs it `errorPenalty` (never below 1); a successful
// connect earns the same amount back (never above the maximum). For each request, every candidate
// gains its weight as credit; the one with the most credit is chosen and pays back the sum of the
// candidates' weights. Over any run of requests each upstream gets a share proportional to its
// weight, interleaved rather than in bursts. Candidates are the upstreams that are not busy (their
// last dispatch returned false and no drain followed); when all are busy, all of them are.
import {
  BalancedPoolMissingUpstreamError,
  ClientClosedError,
  InformationalError,
  InvalidArgumentError,
} from '../core/errors.js';
import type { Dispatcher } from './dispatcher.js';
import { DispatcherBase } from './dispatcher-base.js';
import { Pool, type PoolOptions } from './pool.js';
import { addStats, emptyStats, type PoolStats } from './stats.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { failUnstarted } from '../handler/detached-controller.js';

export interface BalancedPoolOptions extends PoolOptions {
  /** Creates the dispatcher of one upstream; default `new Pool(origin, opts)`. */
  factory?: (origin: URL, opts: object) => Dispatcher;
  /** Weight of a healthy upstream; default 100. */
  maxWeightPerServer?: number;
  /** Weight lost per connection failure and regained per successful connect; default 15. */
  errorPenalty?: number;
}

interface Upstream {
  origin: string;
  dispatcher: Dispatcher;
  weight: number;
  credit: number;
  busy: boolean;
}


function positive(v: unknown, name: string, def: number): number {
  if (v == null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new InvalidArgumentError(`${name} must be a positive number`);
  return v;
}

/** Only protocol, host and port make an upstream; anything else is a mistake worth reporting. */
function upstreamOrigin(upstream: unknown): string {
  let u: URL;
  try {
    u = upstream instanceof URL ? upstream : new URL(String(upstream));
  } catch {
    throw new InvalidArgumentError('invalid upstream url');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
  }
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw new InvalidArgumentError('an upstream is only protocol, hostname and port');
  }
  return u.origin;
}

export class BalancedPool extends DispatcherBase {
  readonly #opts: PoolOptions;
  readonly #factory: (origin: URL, opts: object) => Dispatcher;
  readonly #maxWeight: number;
  readonly #penalty: number;
  #upstreams: Upstream[] = [];
  /** Upstreams removed or replaced but still finishing their requests (closed on close/destroy too). */
  readonly #retiring = new Set<Dispatcher>();
  #needDrain = false;

  constructor(upstreams: string | URL | (string | URL)[] = [], options: BalancedPoolOptions = {}) {
    super();
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('invalid options');
    const { factory, maxWeightPerServer, errorPenalty, ...poolOpts } = options;
    this.setWebSocketOptions(poolOpts.webSocket);
    if (factory != null && typeof factory !== 'function') throw new InvalidArgumentError('factory must be a function.');
    this.#factory = factory ?? ((origin, opts) => new Pool(origin, opts as PoolOptions));
    this.#maxWeight = positive(maxWeightPerServer, 'maxWeightPerServer', 100);
    this.#penalty = positive(errorPenalty, 'errorPenalty', 15);
    this.#opts = poolOpts;
    for (const u of Array.isArray(upstreams) ? upstreams : [upstreams]) this.addUpstream(u);
  }

  /** Origins of the current upstreams, in the order they were added. */
  get upstreams(): string[] {
    return this.#upstreams.map((u) => u.origin);
  }

  /** The sum of the upstreams' stats (those that report any). */
  get stats(): PoolStats {
    const total = emptyStats();
    for (const u of this.#upstreams) {
      const s = (u.dispatcher as { stats?: PoolStats }).stats;
      if (s) addStats(total, s);
    }
    return total;
  }

  addUpstream(upstream: string | URL): this {
    const origin = upstreamOrigin(upstream);
    if (this.closed) throw new ClientClosedError();
    if (this.#upstreams.some((u) => u.origin === origin)) return this;
    const dispatcher = this.#factory(new URL(origin), { ...this.#opts });
    const entry: Upstream = { origin, dispatcher, weight: this.#maxWeight, credit: 0, busy: false };
    const current = (): boolean => this.#upstreams.includes(entry);
    dispatcher.on('connect', (o: URL, targets: Dispatcher[]) => {
      entry.weight = Math.min(this.#maxWeight, entry.weight + this.#penalty);
      this.emit('connect', o, [this, ...targets]);
    });
    dispatcher.on('connectionError', (o: URL, targets: Dispatcher[], err: Error) => {
      this.#penalize(entry);
      this.emit('connectionError', o, [this, ...targets], err);
    });
    dispatcher.on('disconnect', (o: URL, targets: Dispatcher[], err: Error) => {
      // Idle timeouts and clean closes are informational; anything else is a failure.
      if (!(err instanceof InformationalError)) this.#penalize(entry);
      this.emit('disconnect', o, [this, ...targets], err);
    });
    dispatcher.on('drain', (o: URL, targets: Dispatcher[]) => {
      entry.busy = false;
      if (this.#needDrain && current()) {
        this.#needDrain = false;
        this.emit('drain', o, [this, ...targets]);
      }
    });
    this.#upstreams.push(entry);
    if (this.#needDrain) {
      // Every other upstream was busy: this one is not.
      this.#needDrain = false;
      queueMicrotask(() => this.emit('drain', new URL(origin), [this, dispatcher]));
    }
    return this;
  }

  /** Takes an upstream out of rotation; its requests in flight still complete, then it closes. */
  removeUpstream(upstream: string | URL): this {
    const origin = upstreamOrigin(upstream);
    const entry = this.#upstreams.find((u) => u.origin === origin);
    if (entry === undefined) return this;
    this.#upstreams = this.#upstreams.filter((u) => u !== entry);
    this.#retiring.add(entry.dispatcher);
    void entry.dispatcher.close().finally(() => this.#retiring.delete(entry.dispatcher));
    return this;
  }

  #penalize(entry: Upstream): void {
    entry.weight = Math.max(1, entry.weight - this.#penalty);
  }

  #pick(): Upstream | undefined {
    const free = this.#upstreams.filter((u) => !u.busy);
    const candidates = free.length > 0 ? free : this.#upstreams;
    let best: Upstream | undefined;
    let total = 0;
    for (const u of candidates) {
      u.credit += u.weight;
      total += u.weight;
      if (best === undefined || u.credit > best.credit) best = u;
    }
    if (best !== undefined) best.credit -= total;
    return best;
  }

  // A request goes to whichever upstream is picked, not to its `origin`: interceptors get no origin
  // to file it under (the cache passes such requests through, as in undici).
  protected override get composeOrigin(): null {
    return null;
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    const refused = this.refusal(opts);
    if (refused !== null) return failUnstarted(handler, refused);
    const entry = this.#pick();
    if (entry === undefined) return failUnstarted(handler, new BalancedPoolMissingUpstreamError());
    if (!entry.dispatcher.dispatch(opts, handler)) entry.busy = true;
    if (this.#upstreams.every((u) => u.busy)) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  protected onClose(): Promise<unknown> {
    return Promise.all(this.#parts().map((d) => d.close()));
  }

  protected onDestroy(err: Error | null): Promise<unknown> {
    return Promise.all(this.#parts().map((d) => d.destroy(err)));
  }

  #parts(): Dispatcher[] {
    return [...this.#upstreams.map((u) => u.dispatcher), ...this.#retiring];
  }
}

// undici's companion type, reached through the class (`BalancedPool.Options`).
export declare namespace BalancedPool {
  export type Options = BalancedPoolOptions;
}
