// BalancedPool: one Pool per upstream origin, each request sent to one of them.
//
// Picking scheme (interleaved weighted round-robin, as undici's): every upstream has a weight,
// starting at `maxWeightPerServer`. A connection failure, or a connection lost with a socket error,
// costs it `errorPenalty` (never below 1); a successful connect earns the same amount back (never
// above the maximum). The pool walks the upstreams in order with a threshold that starts at the
// maximum and drops by the weights' greatest common divisor each time the walk wraps round; an
// upstream is taken when its weight reaches the threshold. Over a run of requests each upstream
// gets a share proportional to its weight, and the order is undici's request for request. Busy
// upstreams (their last dispatch returned false and no drain followed) are passed over; when all
// are busy, the heaviest takes the request and dispatch returns false.
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
  busy: boolean;
}

/** Closed or destroyed (a dispatcher from a custom factory may lack the fields). */
function retired(d: Dispatcher): boolean {
  const state = d as { closed?: unknown; destroyed?: unknown };
  return state.closed === true || state.destroyed === true;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
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
  /** Where the walk over the upstreams stands, and the weight an upstream needs to be taken. */
  #index = -1;
  #threshold = 0;
  /** Greatest common divisor of the weights: the threshold's step. */
  #step = 0;

  constructor(upstreams: string | URL | (string | URL)[] = [], options: BalancedPoolOptions = {}) {
    super();
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('invalid options');
    const { factory, maxWeightPerServer, errorPenalty, ...poolOpts } = options;
    this.setWebSocketOptions(poolOpts.webSocket);
    this.setEventSourceOptions(poolOpts.eventSource);
    if (factory != null && typeof factory !== 'function') throw new InvalidArgumentError('factory must be a function.');
    this.#factory = factory ?? ((origin, opts) => new Pool(origin, opts as PoolOptions));
    this.#maxWeight = positive(maxWeightPerServer, 'maxWeightPerServer', 100);
    this.#penalty = positive(errorPenalty, 'errorPenalty', 15);
    this.#opts = poolOpts;
    for (const u of Array.isArray(upstreams) ? upstreams : [upstreams]) this.addUpstream(u);
  }

  /** Origins of the current upstreams (not closed or destroyed), in the order they were added. */
  get upstreams(): string[] {
    return this.#upstreams.filter((u) => !retired(u.dispatcher)).map((u) => u.origin);
  }

  /**
   * The dispatcher of an upstream, or undefined when there is none (or it was closed or
   * destroyed). Typed as undici types it: a Pool unless `factory` makes something else.
   */
  getUpstream(upstream: string | URL): Pool | undefined {
    return this.#live(upstreamOrigin(upstream))?.dispatcher as Pool | undefined;
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
    if (this.#live(origin) !== undefined) return this;
    // One closed or destroyed from outside (through getUpstream) is replaced.
    this.#retire(this.#upstreams.find((u) => u.origin === origin));
    const dispatcher = this.#factory(new URL(origin), { ...this.#opts });
    const entry: Upstream = { origin, dispatcher, weight: this.#maxWeight, busy: false };
    const current = (): boolean => this.#upstreams.includes(entry);
    dispatcher.on('connect', (o: URL, targets: Dispatcher[]) => {
      // As undici, the step is not recomputed here: it changes on failures and on addUpstream.
      entry.weight = Math.min(this.#maxWeight, entry.weight + this.#penalty);
      this.emit('connect', o, [this, ...targets]);
    });
    dispatcher.on('connectionError', (o: URL, targets: Dispatcher[], err: Error) => {
      this.#penalize(entry);
      this.emit('connectionError', o, [this, ...targets], err);
    });
    dispatcher.on('disconnect', (o: URL, targets: Dispatcher[], err: Error) => {
      // A socket error is a failure; idle timeouts, clean closes and aborts are not.
      if ((err as { code?: unknown } | undefined)?.code === 'UND_ERR_SOCKET') this.#penalize(entry);
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
    // As undici: a new upstream puts every upstream back at full weight.
    for (const u of this.#upstreams) u.weight = this.#maxWeight;
    this.#updateStep();
    if (this.#needDrain) {
      // Every other upstream was busy: this one is not.
      this.#needDrain = false;
      queueMicrotask(() => this.emit('drain', new URL(origin), [this, dispatcher]));
    }
    return this;
  }

  /** Takes an upstream out of rotation; its requests in flight still complete, then it closes. */
  removeUpstream(upstream: string | URL): this {
    this.#retire(this.#live(upstreamOrigin(upstream)));
    return this;
  }

  #live(origin: string): Upstream | undefined {
    return this.#upstreams.find((u) => u.origin === origin && !retired(u.dispatcher));
  }

  #retire(entry: Upstream | undefined): void {
    if (entry === undefined) return;
    this.#upstreams = this.#upstreams.filter((u) => u !== entry);
    this.#retiring.add(entry.dispatcher);
    void Promise.resolve(retired(entry.dispatcher) ? undefined : entry.dispatcher.close())
      .catch(() => {})
      .finally(() => this.#retiring.delete(entry.dispatcher));
  }

  #penalize(entry: Upstream): void {
    entry.weight = Math.max(1, entry.weight - this.#penalty);
    this.#updateStep();
  }

  #updateStep(): void {
    this.#step = this.#upstreams.reduce((acc, u) => gcd(u.weight, acc), 0);
  }

  /** The next upstream in the weighted walk, passing over busy ones; undefined when all are. */
  #pick(): Upstream | undefined {
    const list = this.#upstreams;
    let heaviest = -1;
    for (let n = 0; n < list.length; n++) {
      this.#index = (this.#index + 1) % list.length;
      if (this.#index === 0) {
        // A new round: the bar drops one step, and starts again from the top once it reaches 0.
        this.#threshold -= this.#step;
        if (this.#threshold <= 0) this.#threshold = this.#maxWeight;
      }
      const u = list[this.#index]!;
      if (u.busy || retired(u.dispatcher)) continue;
      if (heaviest === -1 || u.weight > list[heaviest]!.weight) heaviest = this.#index;
      if (u.weight >= this.#threshold) return u;
    }
    if (heaviest === -1) return undefined;
    // None reaches the bar: take the heaviest and lower the bar to it.
    this.#index = heaviest;
    this.#threshold = list[heaviest]!.weight;
    return list[heaviest];
  }

  /** When every upstream is busy: the heaviest takes the request (its Pool queues it). */
  #fallback(): Upstream | undefined {
    let best: Upstream | undefined;
    for (const u of this.#upstreams) if (best === undefined || u.weight > best.weight) best = u;
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
    const entry = this.#pick() ?? this.#fallback();
    if (entry === undefined) return failUnstarted(handler, new BalancedPoolMissingUpstreamError());
    if (!entry.dispatcher.dispatch(opts, handler)) entry.busy = true;
    if (this.#upstreams.every((u) => u.busy)) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  protected onClose(): Promise<unknown> {
    // As undici: a pool whose close has finished is destroyed too.
    return Promise.all(this.#parts().map((d) => d.close())).then(() => this.markDestroyed());
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
