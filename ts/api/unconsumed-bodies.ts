// Deadlines of request() bodies nobody has started reading (the dispatcher's
// `unconsumedBodyTimeout`, counted from the response head; docs/memory.md). One timer per distinct
// timeout value rather than one per request: requests watched with the same timeout fall due in
// the order they were watched, so each lane's timer only ever waits for its oldest entry.

/** A request whose body is watched; told once when its deadline passes. */
export interface UnconsumedWatcher {
  onUnconsumedTimeout(ms: number): void;
}

interface Lane {
  readonly ms: number;
  /** Watched requests and when each falls due (performance.now()), oldest first. */
  readonly due: Map<UnconsumedWatcher, number>;
  timer: NodeJS.Timeout | null;
}

const lanes = new Map<number, Lane>();

/** Starts `ms` (> 0) for `watcher`. */
export function watchUnconsumed(watcher: UnconsumedWatcher, ms: number): void {
  let lane = lanes.get(ms);
  if (lane === undefined) {
    lane = { ms, due: new Map(), timer: null };
    lanes.set(ms, lane);
  }
  lane.due.set(watcher, performance.now() + ms);
  if (lane.timer === null) arm(lane, ms);
}

/** The request settled (or its body is being read): nothing to release. */
export function unwatchUnconsumed(watcher: UnconsumedWatcher): void {
  if (lanes.size === 0) return;
  for (const lane of lanes.values()) if (lane.due.delete(watcher)) return;
}

function arm(lane: Lane, ms: number): void {
  // Unref'd: a watched request keeps the process alive through its connection, not this timer.
  lane.timer = setTimeout(expire, Math.max(1, Math.ceil(ms)), lane).unref();
}

function expire(lane: Lane): void {
  lane.timer = null;
  const now = performance.now();
  for (const [watcher, due] of lane.due) {
    if (due > now) {
      arm(lane, due - now);
      return;
    }
    lane.due.delete(watcher);
    watcher.onUnconsumedTimeout(lane.ms);
  }
  // Empty: drop the lane so a timeout used once does not stay in the map.
  lanes.delete(lane.ms);
}
