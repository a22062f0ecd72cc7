// `stats` of Client, Pool and BalancedPool, with undici's meanings.

export interface PoolStats {
  /** Open connections. */
  connected: number;
  /** Open connections ready to take a request. */
  free: number;
  /** Requests not yet written to a connection. */
  pending: number;
  /** Requests waiting for a connection (the same requests as `pending` here: there is one queue). */
  queued: number;
  /** Requests written and not yet complete. */
  running: number;
  /** pending + running. */
  size: number;
}

export function emptyStats(): PoolStats {
  return { connected: 0, free: 0, pending: 0, queued: 0, running: 0, size: 0 };
}

/** Adds `b` into `a` field by field. */
export function addStats(a: PoolStats, b: PoolStats): PoolStats {
  a.connected += b.connected;
  a.free += b.free;
  a.pending += b.pending;
  a.queued += b.queued;
  a.running += b.running;
  a.size += b.size;
  return a;
}
