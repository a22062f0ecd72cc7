// Deadlines of request() bodies nobody has started reading (the dispatcher's
// `unconsumedBodyTimeout`, counted from the response head; docs/memory.md). One timer per distinct
// timeout value rather than one per request: requests watched with the same timeout fall due in
// the order they were watched, so each lane's timer only ever waits for its oldest entry.

// Imported, not the global: Node's global `performance` is an accessor, read on every use.
import { performance } from 'node:perf_hooks';

/**
 * A request whose body is watched; told once when its deadline passes. The `unconsumed*` fields
 * are this module's: a lane is a list linked through its watchers, so watching and unwatching
 * (both once per response) allocate nothing and unwatching finds its place at once.
 */
export interface UnconsumedWatcher {
  onUnconsumedTimeout(ms: number): void;
  /** The lane it waits in; null when not watched. */
  unconsumedLane: UnconsumedLane | null;
  unconsumedPrev: UnconsumedWatcher | null;
  unconsumedNext: UnconsumedWatcher | null;
  /** When it falls due (performance.now()). */
  unconsumedDue: number;
}

/** The watchers of one timeout value. */
export interface UnconsumedLane {
  readonly ms: number;
  /** The watched requests, oldest (first due) first. */
  head: UnconsumedWatcher | null;
  tail: UnconsumedWatcher | null;
  timer: NodeJS.Timeout | null;
}

const lanes = new Map<number, UnconsumedLane>();
let lastLane: UnconsumedLane | null = null;

/** Starts `ms` (> 0) for `watcher`. */
export function watchUnconsumed(watcher: UnconsumedWatcher, ms: number): void {
  if (watcher.unconsumedLane !== null) unwatchUnconsumed(watcher);
  // Nearly every request has its dispatcher's timeout: the last lane used, before the map.
  let lane = lastLane !== null && lastLane.ms === ms ? lastLane : lanes.get(ms);
  if (lane === undefined) {
    lane = { ms, head: null, tail: null, timer: null };
    lanes.set(ms, lane);
  }
  lastLane = lane;
  watcher.unconsumedDue = performance.now() + ms;
  watcher.unconsumedLane = lane;
  watcher.unconsumedPrev = lane.tail;
  watcher.unconsumedNext = null;
  if (lane.tail === null) lane.head = watcher;
  else lane.tail.unconsumedNext = watcher;
  lane.tail = watcher;
  if (lane.timer === null) arm(lane, ms);
}

/** The request settled (or its body is being read): nothing to release. */
export function unwatchUnconsumed(watcher: UnconsumedWatcher): void {
  const lane = watcher.unconsumedLane;
  if (lane === null) return;
  const prev = watcher.unconsumedPrev;
  const next = watcher.unconsumedNext;
  if (prev === null) lane.head = next;
  else prev.unconsumedNext = next;
  if (next === null) lane.tail = prev;
  else next.unconsumedPrev = prev;
  watcher.unconsumedLane = watcher.unconsumedPrev = watcher.unconsumedNext = null;
}

function arm(lane: UnconsumedLane, ms: number): void {
  // Unref'd: a watched request keeps the process alive through its connection, not this timer.
  lane.timer = setTimeout(expire, Math.max(1, Math.ceil(ms)), lane).unref();
}

function expire(lane: UnconsumedLane): void {
  lane.timer = null;
  const now = performance.now();
  // The head is read again after every callback: a callback may unwatch others.
  for (let watcher = lane.head; watcher !== null; watcher = lane.head) {
    const due = watcher.unconsumedDue;
    if (due > now) {
      // (Armed already if a callback watched a request.)
      if (lane.timer === null) arm(lane, due - now);
      return;
    }
    unwatchUnconsumed(watcher);
    watcher.onUnconsumedTimeout(lane.ms);
  }
  // Empty: drop the lane so a timeout used once does not stay in the map.
  lanes.delete(lane.ms);
  if (lastLane === lane) lastLane = null;
}
