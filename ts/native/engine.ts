// The one engine of this JS environment (each worker thread gets its own): owns the native
// engine, the id → request and id → pool tables that events are routed through, and keeps the
// process alive exactly while requests are in flight.
import { binding, type NativeEngine, type NativePool, type PoolConfig } from './binding.js';
import { decodeBatch, type BridgeSink, type PoolSink, type RequestSink } from './events.js';
import { forgetObservation } from '../core/diagnostics.js';

const requests = new Map<number, RequestSink>();
const pools = new Map<number, PoolSink>();
const bridges = new Map<number, BridgeSink>();
let native: NativeEngine | null = null;
let nextId = 1;
let referenced = false;

function onEvents(batch: Buffer): void {
  decodeBatch(batch, requests, pools, bridges);
}

function engine(): NativeEngine {
  if (native === null) {
    const workers = Number(process.env.FERRO_ENGINE_THREADS ?? 1) || 1;
    native = new binding.NativeEngine(onEvents, workers);
  }
  return native;
}

export function createPool(cfg: PoolConfig, sink: PoolSink): NativePool {
  const pool = engine().createPool(cfg);
  pools.set(pool.id, sink);
  return pool;
}

export function forgetPool(pool: NativePool): void {
  pools.delete(pool.id);
  toFlush.delete(pool);
}

// Requests dispatched during one JS tick are queued in the engine without waking it; one
// microtask then wakes each pool once. Handlers typically dispatch many requests per tick (one
// per completed response in a batch), so this saves an engine wake-up per request.
const toFlush = new Set<NativePool>();
let flushQueued = false;

function flushAll(): void {
  flushQueued = false;
  forgetObservation();
  for (const pool of toFlush) pool.flush();
  toFlush.clear();
}

export function scheduleFlush(pool: NativePool): void {
  toFlush.add(pool);
  if (!flushQueued) {
    flushQueued = true;
    queueMicrotask(flushAll);
  }
}

/** Registers a request and returns its id; the engine is kept referenced while any is open. */
export function openRequest(sink: RequestSink): number {
  const id = nextId;
  nextId = nextId === 0xffffffff ? 1 : nextId + 1;
  requests.set(id, sink);
  if (!referenced) {
    referenced = true;
    engine().ref();
  }
  return id;
}

/** Sends request `id`'s further events to `sink` (an upgraded request's tunnel). */
export function routeRequest(id: number, sink: RequestSink): void {
  if (requests.has(id)) requests.set(id, sink);
}

export function closeRequest(id: number): void {
  requests.delete(id);
  if (referenced && requests.size === 0) {
    referenced = false;
    native!.unref();
  }
}

/**
 * What this environment's engine holds right now: requests routed to JS, and the engine's own
 * live requests and connection tasks. All zero once every dispatcher is closed (leak checks).
 */
export function engineCounts(): { jsRequests: number; jsPools: number; requests: number; connections: number } {
  const inEngine = native?.counts() ?? { requests: 0, connections: 0 };
  return { jsRequests: requests.size, jsPools: pools.size, ...inEngine };
}

export const control = {
  pause(id: number): void {
    native?.pause(id);
  },
  resume(id: number): void {
    native?.resume(id);
  },
  abort(id: number): void {
    native?.abort(id);
  },
  /** False: wait for the request's drain event before writing more. */
  write(id: number, chunk: Buffer): boolean {
    return native?.write(id, chunk) ?? false;
  },
  end(id: number): void {
    native?.end(id);
  },
};

/** Calls about bridged sockets (ts/dispatcher/engine/bridged-sockets.ts); ids come from BRIDGE_OPEN events. */
export const bridge = {
  /** Routes the engine's events for bridge `id` to `sink` until `forget`. */
  register(id: number, sink: BridgeSink): void {
    bridges.set(id, sink);
  },
  forget(id: number): void {
    bridges.delete(id);
  },
  attach(id: number, addrs: string): boolean {
    return native?.bridgeAttach(id, addrs) ?? false;
  },
  fail(id: number, code: number, errno: string, message: string): boolean {
    return native?.bridgeFail(id, code, errno, message) ?? false;
  },
  data(id: number, chunk: Buffer): boolean {
    return native?.bridgeData(id, chunk) ?? true;
  },
  end(id: number): void {
    native?.bridgeEnd(id);
  },
  error(id: number, errno: string, message: string): void {
    native?.bridgeError(id, errno, message);
  },
  writable(id: number, writable: boolean): void {
    native?.bridgeWritable(id, writable);
  },
};
