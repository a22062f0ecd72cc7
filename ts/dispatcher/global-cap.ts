// An Agent's `maxGlobalConnections`: at most N sockets across all its origins. The engine
// enforces the cap (crates/engine/src/cap.rs): a pool takes a slot before it opens a connection
// and gives it back when the connection ends, so no timing can exceed it, and a request over the
// cap simply stays queued in its origin's pool. This side keeps what the engine does not need:
// each origin's requests in dispatch order (for `wait` and `maxQueueTime`), the stats and the
// `lib:pool:queue` channel. An Agent without the option makes none of this.
import { binding, type NativeConnCap } from '../native/binding.js';
import { QueueTimeoutError } from '../core/errors.js';
import { poolQueueChannel } from '../core/diagnostics.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import type { Dispatcher } from './dispatcher.js';
import { addStats, emptyStats, type ClientStats, type PoolStats } from './stats.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { DispatchController, DispatchHandler, DispatchOptions, IncomingHeaders } from '../core/types.js';

/** The option key under which an Agent hands its cap to the pools it creates (pool-options.ts). */
export const kConnCap: unique symbol = Symbol('ferro.connCap');

/**
 * `agent.stats` per origin and in total, with `maxGlobalConnections`. It carries undici's PoolStats
 * fields too (`connected` = `open`, `free` = `idle`, `running`, `size`), so code typed for undici's
 * `agent.stats` still compiles and reads them; only `pending` takes the cap's meaning (requests
 * sent and awaiting their response, the same number as `running`), as the README documents.
 */
export interface GlobalPoolStats extends PoolStats {
  /** Open connections. */
  open: number;
  /** Open connections waiting for work. */
  idle: number;
  /** Requests on a connection, awaiting (or receiving) their response. */
  pending: number;
  /** Requests waiting for a connection (for the cap, or for a busy connection of their origin). */
  queued: number;
  /** Milliseconds the oldest queued request has waited. */
  wait: number;
}

function globalStats(open: number, idle: number, pending: number, queued: number, wait: number): GlobalPoolStats {
  return { open, idle, pending, queued, wait, connected: open, free: idle, running: pending, size: pending + queued };
}

/** A request dispatched through the Agent, until it ends. */
interface Waiter {
  readonly at: number;
  controller: DispatchController | null;
  done: boolean;
}

/** One origin's dispatcher and its requests in dispatch order. */
class OriginRequests {
  readonly list: Waiter[] = [];
  live = 0;
  /** What `lib:pool:queue` last heard for this origin. */
  published = 0;
  constructor(
    readonly origin: string,
    readonly dispatcher: Dispatcher,
  ) {}

  /** Its requests wait for a slot of the cap (false for a dispatcher not made by the engine). */
  waits(): boolean {
    return (this.dispatcher as { waitsForCap?: boolean }).waitsForCap === true;
  }

  /** The engine's counts for this origin (a Client's included). */
  counts(): PoolStats {
    const s = (this.dispatcher as { stats?: PoolStats | ClientStats }).stats;
    return s === undefined ? emptyStats() : addStats(emptyStats(), s);
  }

  /**
   * The requests still waiting for a connection: the engine takes each origin's queue in order,
   * so they are the newest `queued` of those not ended.
   */
  queued(queued: number): Waiter[] {
    const out: Waiter[] = [];
    for (let i = this.list.length - 1; i >= 0 && out.length < queued; i--) {
      if (!this.list[i].done) out.push(this.list[i]);
    }
    return out.reverse();
  }

  end(w: Waiter): void {
    w.done = true;
    this.live--;
    let i = 0;
    while (i < this.list.length && this.list[i].done) i++;
    if (i > 0) this.list.splice(0, i);
  }
}

export class GlobalCap {
  readonly native: NativeConnCap;
  readonly #maxQueueTime: number;
  readonly #origins = new Map<string, OriginRequests>();
  #timer: NodeJS.Timeout | null = null;
  /** Origins that dispatched this tick, looked at once the engine has taken the tick's requests. */
  readonly #dispatched = new Set<OriginRequests>();

  constructor(limit: number, maxQueueTime: number) {
    this.native = new binding.NativeConnCap(limit);
    this.#maxQueueTime = maxQueueTime;
  }

  /** The options a pool of this Agent is made with. */
  poolOptions(): { [kConnCap]: GlobalCap } {
    return { [kConnCap]: this };
  }

  forget(key: string): void {
    this.#origins.delete(key);
  }

  /** Dispatches through `dispatcher` (the pool for `key`), watching the request while it lives. */
  dispatch(key: string, origin: string, dispatcher: Dispatcher, opts: DispatchOptions, handler: DispatchHandler): boolean {
    let o = this.#origins.get(key);
    if (o === undefined || o.dispatcher !== dispatcher) {
      o = new OriginRequests(origin, dispatcher);
      this.#origins.set(key, o);
    }
    const w: Waiter = { at: performance.now(), controller: null, done: false };
    o.list.push(w);
    o.live++;
    const ok = dispatcher.dispatch(opts, new CapHandler(handler, w, o, this));
    if (this.#dispatched.size === 0) queueMicrotask(() => this.#settle());
    this.#dispatched.add(o);
    return ok;
  }

  /**
   * After the tick's flush (queued before this microtask): origins whose requests now wait for a
   * slot say so on `lib:pool:queue`, and the `maxQueueTime` clock starts.
   */
  #settle(): void {
    let waiting = false;
    for (const o of this.#dispatched) {
      if (!o.waits()) continue;
      waiting = true;
      this.#published(o, o.counts().queued);
    }
    this.#dispatched.clear();
    if (waiting && this.#maxQueueTime > 0) this.#arm();
  }

  /** Stats per origin key and in total. */
  stats(): Record<string, GlobalPoolStats> {
    const now = performance.now();
    const all: Record<string, GlobalPoolStats> = {};
    const total = globalStats(0, 0, 0, 0, 0);
    for (const [key, o] of this.#origins) {
      const c = o.counts();
      const oldest = o.queued(c.queued)[0];
      const s = globalStats(c.connected, c.free, Math.max(0, o.live - c.queued), c.queued, oldest === undefined ? 0 : Math.round(now - oldest.at));
      all[key] = s;
      total.open += s.open;
      total.idle += s.idle;
      total.pending += s.pending;
      total.queued += s.queued;
      total.wait = Math.max(total.wait, s.wait);
    }
    all.total = globalStats(total.open, total.idle, total.pending, total.queued, total.wait);
    return all;
  }

  /** Something of `o` moved on: its queue may have shrunk. */
  progressed(o: OriginRequests): void {
    if (o.published > 0) this.#published(o, o.counts().queued);
  }

  #published(o: OriginRequests, queued: number): void {
    if (queued === o.published) return;
    o.published = queued;
    if (poolQueueChannel.hasSubscribers) poolQueueChannel.publish({ origin: o.origin, queued });
  }

  /** Wakes when the oldest queued request reaches `maxQueueTime`. */
  #arm(): void {
    if (this.#timer !== null) return;
    let oldest = Infinity;
    for (const o of this.#origins.values()) {
      if (!o.waits()) continue;
      const w = o.queued(o.counts().queued)[0];
      if (w !== undefined && w.at < oldest) oldest = w.at;
    }
    if (oldest === Infinity) return;
    const delay = Math.max(0, oldest + this.#maxQueueTime - performance.now());
    this.#timer = setTimeout(() => this.#expire(), Math.ceil(delay));
    this.#timer.unref();
  }

  /** Fails the requests that waited longer than `maxQueueTime` (the engine drops them, unsent). */
  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    for (const o of this.#origins.values()) {
      if (!o.waits()) continue;
      for (const w of o.queued(o.counts().queued)) {
        if (now - w.at < this.#maxQueueTime) break;
        w.controller?.abort(new QueueTimeoutError(`Request waited ${Math.round(now - w.at)} ms for a connection (maxQueueTime ${this.#maxQueueTime} ms)`));
      }
    }
    this.#arm();
  }

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** Forwards every callback, noting the request's controller and its end. */
class CapHandler implements DispatchHandler {
  readonly #handler: DispatchHandler;
  readonly #w: Waiter;
  readonly #o: OriginRequests;
  readonly #cap: GlobalCap;

  constructor(handler: DispatchHandler, w: Waiter, o: OriginRequests, cap: GlobalCap) {
    this.#handler = toControllerHandler(handler);
    this.#w = w;
    this.#o = o;
    this.#cap = cap;
  }

  #end(): void {
    if (this.#w.done) return;
    this.#o.end(this.#w);
    this.#cap.progressed(this.#o);
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#w.controller = controller;
    this.#handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#end();
    this.#handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#cap.progressed(this.#o);
    this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    this.#end();
    this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: DispatchController, error: Error): void {
    this.#end();
    this.#handler.onResponseError?.(controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.#handler.onRequestSent?.();
  }

  onResponseStarted(): void {
    this.#handler.onResponseStarted?.();
  }
}
