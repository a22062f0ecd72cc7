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

let countsOf: (stats: ClientStats) => PoolStats;

/** A Client's `stats`, with undici's ClientStats fields. */
export class ClientStats {
  /** The engine's counts, for a pool of Clients to add up (free and queued included). */
  readonly #counts: PoolStats;
  /** Whether the connection is open. */
  readonly connected: boolean;
  /** Requests not yet written to the connection. */
  readonly pending: number;
  /** Requests written and not yet complete. */
  readonly running: number;
  /** pending + running. */
  readonly size: number;

  static {
    countsOf = (stats) => stats.#counts;
  }

  constructor(counts: PoolStats) {
    this.#counts = counts;
    this.connected = counts.connected > 0;
    this.pending = counts.pending;
    this.running = counts.running;
    this.size = counts.size;
  }
}

export function emptyStats(): PoolStats {
  return { connected: 0, free: 0, pending: 0, queued: 0, running: 0, size: 0 };
}

/** Adds `b` (a Client's counts when it is a ClientStats) into `a` field by field. */
export function addStats(a: PoolStats, stats: PoolStats | ClientStats): PoolStats {
  const b = stats instanceof ClientStats ? countsOf(stats) : stats;
  a.connected += b.connected;
  a.free += b.free;
  a.pending += b.pending;
  a.queued += b.queued;
  a.running += b.running;
  a.size += b.size;
  return a;
}
