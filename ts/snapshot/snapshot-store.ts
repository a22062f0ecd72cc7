// The snapshots held in memory, one per distinct request (by hash) in the order each was first
// recorded: its recorded responses in order, and the playback position (recorded order, then the
// last one repeats). maxSnapshots bounds the number of requests; the oldest goes first.
import type { SnapshotEntry, SnapshotRecord, SnapshotRequest, SnapshotResponse } from './snapshot-format.js';
import { snapshotHash, type SnapshotKey } from './snapshot-key.js';
import type { MissCandidate } from './snapshot-miss.js';

export interface Identity {
  key: SnapshotKey;
  hash: string;
}

interface Group {
  key: SnapshotKey;
  records: SnapshotRecord[];
  /** Responses playback has handed out since the last reset. */
  callCount: number;
}

/** One request and what was recorded for it (undici's SnapshotRecorder.Snapshot). */
export interface StoredSnapshot {
  request: SnapshotRequest;
  responses: SnapshotResponse[];
  callCount: number;
  /** When its newest response was recorded, ISO 8601. */
  timestamp: string;
}

/** What is held for one request, without the responses (undici's SnapshotRecorder.SnapshotInfo). */
export interface StoredSnapshotInfo {
  hash: string;
  request: SnapshotRequest;
  responseCount: number;
  callCount: number;
  timestamp: string;
}

export class SnapshotStore {
  readonly #maxSnapshots: number;
  readonly #keyOf: (request: SnapshotRequest) => SnapshotKey;
  /** Insertion order is age order: eviction takes the first. */
  #groups = new Map<string, Group>();
  /** The file the snapshots were last loaded from when it did not exist, for the miss message. */
  missingFile: string | undefined;

  constructor(maxSnapshots: number, keyOf: (request: SnapshotRequest) => SnapshotKey) {
    this.#maxSnapshots = maxSnapshots;
    this.#keyOf = keyOf;
  }

  /** The key and hash a request is stored and looked up under. */
  identify(request: SnapshotRequest): Identity {
    const key = this.#keyOf(request);
    return { key, hash: snapshotHash(key) };
  }

  /** Adds a response after any recorded for the same request; a new request may evict the oldest. */
  record(record: SnapshotRecord, identity: Identity = this.identify(record.request)): void {
    const group = this.#groups.get(identity.hash);
    if (group !== undefined) {
      group.records.push(structuredClone(record));
      return;
    }
    if (this.#groups.size >= this.#maxSnapshots) this.#groups.delete(this.#groups.keys().next().value!);
    this.#groups.set(identity.hash, { key: identity.key, records: [structuredClone(record)], callCount: 0 });
  }

  has(hash: string): boolean {
    return this.#groups.has(hash);
  }

  /** The next recorded response for `hash` in recorded order; the last one again once all were used. */
  next(hash: string): SnapshotRecord | undefined {
    const group = this.#groups.get(hash);
    if (group === undefined) return undefined;
    const record = group.records[Math.min(group.callCount, group.records.length - 1)]!;
    group.callCount += 1;
    return record;
  }

  /** A copy of the snapshot under `hash`. */
  get(hash: string): StoredSnapshot | undefined {
    const group = this.#groups.get(hash);
    return group === undefined ? undefined : snapshotOf(group);
  }

  /** What is held under `hash`, or null. */
  info(hash: string): StoredSnapshotInfo | null {
    const group = this.#groups.get(hash);
    if (group === undefined) return null;
    const { request, responses, callCount, timestamp } = snapshotOf(group);
    return { hash, request, responseCount: responses.length, callCount, timestamp };
  }

  /** Forgets every recording under `hash`; false when there was none. */
  delete(hash: string): boolean {
    return this.#groups.delete(hash);
  }

  /** Playback starts over from each request's first response. */
  resetCallCounts(): void {
    for (const group of this.#groups.values()) group.callCount = 0;
  }

  /** Copies of the snapshots, oldest request first. */
  snapshots(): StoredSnapshot[] {
    return [...this.#groups.values()].map(snapshotOf);
  }

  /** Copies of every recorded response as file entries (one per response), oldest request first. */
  entries(): SnapshotEntry[] {
    return [...this.#groups].flatMap(([hash, group]) => group.records.map((r) => ({ hash, snapshot: structuredClone(r) })));
  }

  /** Number of requests held. */
  size(): number {
    return this.#groups.size;
  }

  clear(): void {
    this.#groups.clear();
  }

  /** Holds exactly `records` (the newest maxSnapshots requests of them), with hashes derived again. */
  replace(records: readonly SnapshotRecord[]): void {
    const identified = records.map((record) => ({ identity: this.identify(record.request), record }));
    this.clear();
    for (const { identity, record } of identified) this.record(record, identity);
  }

  /** Every recorded response with its request's key, for explaining a miss. */
  candidates(): MissCandidate[] {
    return [...this.#groups.values()].flatMap(({ key, records }) => records.map((record) => ({ key, record })));
  }
}

/** A copy of a group as a snapshot: the first request recorded, the newest timestamp. */
function snapshotOf(group: Group): StoredSnapshot {
  return {
    request: structuredClone(group.records[0]!.request),
    responses: group.records.map((r) => structuredClone(r.response)),
    callCount: group.callCount,
    timestamp: group.records[group.records.length - 1]!.timestamp,
  };
}
