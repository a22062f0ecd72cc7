// The engines of this JS environment (each worker thread gets its own): at most one of each
// driver kind (issue 20: `inline` runs the engine on this thread's event loop, `threaded` on a
// thread of its own), made on first use. Owns the id → request and id → pool tables events are
// routed through, and keeps the process alive exactly while requests are in flight.
import { binding, type NativeEngine, type NativePool, type PoolConfig } from './binding.js';
import { decodeBatch, type BridgeSink, type PoolSink, type RequestSink } from './events.js';
import { deliveredBatch } from './frames.js';
import { RequestTable } from './request-table.js';
import { forgetObservation } from '../core/diagnostics.js';
import { libDebug } from '../core/debug.js';
import { busyPollMicros, engineKind, engineThreads, type EngineKind } from './driver-choice.js';

/** The driver choice lives in driver-choice.ts; callers take it from here with the engine. */
export { engineKind, type EngineKind };

interface Entry {
  readonly native: NativeEngine;
  /** Bridge ids are the engine's own, so each engine routes its bridged sockets. */
  readonly bridges: Map<number, BridgeSink>;
  /** Requests open on this engine; referenced (keeps the process alive) while any is. */
  open: number;
  /** The engine holds a reference on the event loop. */
  referenced: boolean;
  /** A check is queued that drops the reference if no request is open by then. */
  unrefQueued: boolean;
  calls?: BridgeCalls;
}

/** Not Maps: request-table.ts says why. */
const requests = new RequestTable<RequestSink>();
const pools = new Map<number, PoolSink>();
const engines = new Map<EngineKind, Entry>();
/** The first engine made: requests default to it, only the others' are listed in `owners`. */
let primary: Entry | null = null;
const owners = new RequestTable<Entry>();
/** Pools of an inline engine: flushing them ticks it. */
const inlinePools = new Set<NativePool>();
let nextId = 1;
/** The engine whose events are being delivered. */
let delivering: Entry | null = null;

function entry(kind: EngineKind): Entry {
  let e = engines.get(kind);
  if (e === undefined) {
    const workers = engineThreads();
    const bridges = new Map<number, BridgeSink>();
    const onEvents = (batch: Buffer | ArrayBuffer, own?: Buffer[], offset?: number, length?: number): void => {
      delivering = self;
      try {
        decodeBatch(deliveredBatch(batch, offset, length), own, requests, pools, bridges);
      } finally {
        delivering = null;
      }
    };
    const native = new binding.NativeEngine(onEvents, workers, kind === 'inline', busyPollMicros());
    if (native.fallback !== null) libDebug?.(`inline engine unavailable, using the threaded one: ${native.fallback}`);
    const self: Entry = { native, bridges, open: 0, referenced: false, unrefQueued: false };
    e = self;
    // A fallback shares the threaded engine rather than starting a second one.
    const same = engines.get(native.driver);
    if (same !== undefined) {
      native.close();
      e = same;
    }
    engines.set(kind, e);
    engines.set(native.driver, e);
    primary ??= e;
  }
  return e;
}

const entryOf = (id: number): Entry | undefined => owners.get(id) ?? primary ?? undefined;

/** The engine driver actually running for `kind` (an inline request may fall back). */
export function engineDriver(kind: EngineKind): EngineKind {
  return entry(kind).native.driver;
}

/** The `kind` engine's waits for replies awake, [made, woken in time]; null when it makes none. */
export function engineBusyPoll(kind: EngineKind): [number, number] | null {
  return entry(kind).native.busyPoll;
}

export function createPool(cfg: PoolConfig, sink: PoolSink, kind: EngineKind = engineKind()): NativePool {
  const e = entry(kind);
  const pool = e.native.createPool(cfg);
  pools.set(pool.id, sink);
  if (e.native.driver === 'inline') inlinePools.add(pool);
  return pool;
}

export function forgetPool(pool: NativePool): void {
  pools.delete(pool.id);
  const queued = toFlush.indexOf(pool);
  if (queued >= 0) toFlush.splice(queued, 1);
  inlinePools.delete(pool);
}

// Requests dispatched during one JS tick are queued in the engine without waking it; one
// microtask then wakes each pool once. Handlers typically dispatch many requests per tick (one
// per completed response in a batch), so this saves an engine wake-up per request. An inline
// engine is then ticked once, so the requests go out in this same JS turn.
// An array emptied in place, not a Set: Set.clear() makes a new table each time, and like a Map's
// (request-table.ts) the retired ones can keep each other alive until a full collection. A tick
// flushes few pools, so the duplicate check is a short scan.
const toFlush: NativePool[] = [];
let flushQueued = false;

function flushAll(): void {
  flushQueued = false;
  forgetObservation();
  // The last inline pool is flushed by the tick's own call (one crossing less per serial exchange).
  let last: NativePool | null = null;
  for (const pool of toFlush) {
    if (!inlinePools.has(pool)) pool.flush();
    else {
      last?.flush();
      last = pool;
    }
  }
  toFlush.length = 0;
  if (last !== null) engines.get('inline')?.native.flushTick(last);
}

export function scheduleFlush(pool: NativePool): void {
  if (!toFlush.includes(pool)) toFlush.push(pool);
  if (!flushQueued) {
    flushQueued = true;
    queueMicrotask(flushAll);
  }
}

/** Registers a request and returns its id; its engine is kept referenced while any is open. */
export function openRequest(sink: RequestSink, kind: EngineKind = engineKind()): number {
  const id = nextId;
  nextId = nextId === 0xffffffff ? 1 : nextId + 1;
  requests.add(id, sink);
  const e = entry(kind);
  if (e !== primary) owners.add(id, e);
  if (e.open++ === 0 && !e.referenced) {
    e.referenced = true;
    e.native.ref();
  }
  return id;
}

// The reference is dropped one loop turn after the last request closes, not at once: one request
// at a time otherwise pays an unref and a ref per request, native calls that cost ~5 and ~2 µs
// there (measured in a sequential loop on this machine).
function dropRef(e: Entry): void {
  e.unrefQueued = false;
  if (e.open === 0 && e.referenced) {
    e.referenced = false;
    e.native.unref();
  }
}

/** Sends request `id`'s further events to `sink` (an upgraded request's tunnel). */
export function routeRequest(id: number, sink: RequestSink): void {
  requests.replace(id, sink);
}

/** Every open request's sink (an upgraded request's is its socket). */
export function openSinks(): IterableIterator<RequestSink> {
  return requests.values();
}

export function closeRequest(id: number): void {
  if (!requests.delete(id)) return;
  const e = entryOf(id);
  owners.delete(id);
  if (e !== undefined && --e.open === 0 && !e.unrefQueued) {
    e.unrefQueued = true;
    setImmediate(dropRef, e);
  }
}

/**
 * What this environment's engine holds right now: requests routed to JS, and the engine's own
 * live requests and connection tasks. All zero once every dispatcher is closed (leak checks).
 */
export function engineCounts(): { jsRequests: number; jsPools: number; requests: number; connections: number } {
  const inEngine = { requests: 0, connections: 0 };
  for (const e of new Set(engines.values())) {
    const c = e.native.counts();
    inEngine.requests += c.requests;
    inEngine.connections += c.connections;
  }
  return { jsRequests: requests.size, jsPools: pools.size, ...inEngine };
}

export const control = {
  pause(id: number): void {
    entryOf(id)?.native.pause(id);
  },
  resume(id: number): void {
    entryOf(id)?.native.resume(id);
  },
  abort(id: number): void {
    entryOf(id)?.native.abort(id);
  },
  /** The body's source failed: the engine writes what it was given, then aborts the request. */
  failBody(id: number): void {
    entryOf(id)?.native.failBody(id);
  },
  /** False: wait for the request's drain event before writing more. */
  write(id: number, chunk: Buffer): boolean {
    return entryOf(id)?.native.write(id, chunk) ?? false;
  },
  end(id: number): void {
    entryOf(id)?.native.end(id);
  },
  /** Upgraded request `id` becomes the engine's WebSocket session (throws: bad extensions; false: gone). */
  wsStart(id: number, extensions: string, maxPayloadSize: number, maxFragments: number, stalledWriteTimeout: number): boolean {
    return entryOf(id)?.native.wsStart(id, extensions, maxPayloadSize, maxFragments, stalledWriteTimeout) ?? false;
  },
  /** Queues a WebSocket message or control frame, `op` its RFC 6455 opcode (wsFlush sends); false: wait for the drain event. */
  wsSend(id: number, op: number, data: string | Uint8Array): boolean {
    const n = entryOf(id)?.native;
    if (n === undefined) return true;
    return typeof data === 'string' ? n.wsText(id, data) : n.wsSend(id, op, data);
  },
  /** Sends what wsSend queued for `id`. */
  wsFlush(id: number): void {
    entryOf(id)?.native.wsFlush(id);
  },
};

/** Calls about the bridged sockets of one engine (ts/dispatcher/engine/bridged-sockets.ts); ids come from its BRIDGE_OPEN events. */
function bridgeCalls(e: Entry) {
  const n = e.native;
  return {
    /** Routes the engine's events for bridge `id` to `sink` until `forget`. */
    register(id: number, sink: BridgeSink): void {
      e.bridges.set(id, sink);
    },
    forget(id: number): void {
      e.bridges.delete(id);
    },
    attach: (id: number, addrs: string): boolean => n.bridgeAttach(id, addrs),
    fail: (id: number, code: number, errno: string, message: string): boolean => n.bridgeFail(id, code, errno, message),
    data: (id: number, chunk: Buffer): boolean => n.bridgeData(id, chunk),
    end: (id: number): void => n.bridgeEnd(id),
    error: (id: number, errno: string, message: string): void => n.bridgeError(id, errno, message),
    writable: (id: number, writable: boolean): void => n.bridgeWritable(id, writable),
  };
}
export type BridgeCalls = ReturnType<typeof bridgeCalls>;

export const bridge = {
  /** The calls for the engine whose events are being delivered (BRIDGE_OPEN comes with them). */
  current(): BridgeCalls {
    const e = delivering ?? primary ?? entry(engineKind());
    return (e.calls ??= bridgeCalls(e));
  },
};
