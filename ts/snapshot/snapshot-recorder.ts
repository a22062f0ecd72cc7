// The snapshots a SnapshotAgent holds in memory: recorded interactions in order, indexed by hash,
// with the playback position of each hash (recorded order, then the last one repeats) and the
// maxSnapshots bound (the oldest interaction goes first).
import type { SnapshotEntry, SnapshotRecord, SnapshotRequest } from './snapshot-format.js';
import { snapshotHash, type SnapshotKey } from './snapshot-key.js';
import type { MissCandidate } from './snapshot-miss.js';

interface Held {
  hash: string;
  key: SnapshotKey;
  record: SnapshotRecord;
}

export interface SnapshotRecorderOptions {
  /** Interactions kept at most; Infinity by default. */
  maxSnapshots?: number;
  /** The matched parts of a request; the recorder hashes them. */
  keyOf: (request: SnapshotRequest) => SnapshotKey;
}

export class SnapshotRecorder {
  readonly #maxSnapshots: number;
  readonly #keyOf: (request: SnapshotRequest) => SnapshotKey;
  #held: Held[] = [];
  #byHash = new Map<string, Held[]>();
  /** Per hash, how many of its recordings playback has handed out. */
  #played = new Map<string, number>();

  constructor(options: SnapshotRecorderOptions) {
    this.#maxSnapshots = options.maxSnapshots ?? Infinity;
    this.#keyOf = options.keyOf;
  }

  /** The key and hash a request is stored and looked up under. */
  identify(request: SnapshotRequest): { key: SnapshotKey; hash: string } {
    const key = this.#keyOf(request);
    return { key, hash: snapshotHash(key) };
  }

  /**
   * Adds an interaction after any with the same hash; returns it as a file entry. `identity` is
   * what identify() gave for its request, when the caller has it already.
   */
  record(record: SnapshotRecord, identity?: { key: SnapshotKey; hash: string }): SnapshotEntry {
    const { key, hash } = identity ?? this.identify(record.request);
    this.#add({ hash, key, record });
    while (this.#held.length > this.#maxSnapshots) this.#evictOldest();
    return { hash, snapshot: structuredClone(record) };
  }

  has(hash: string): boolean {
    return this.#byHash.has(hash);
  }

  /** The next recorded response for `hash` in recorded order; the last one again once all were used. */
  next(hash: string): SnapshotRecord | undefined {
    const list = this.#byHash.get(hash);
    if (list === undefined) return undefined;
    const n = this.#played.get(hash) ?? 0;
    this.#played.set(hash, n + 1);
    return list[Math.min(n, list.length - 1)]!.record;
  }

  /** What is held under `hash` (undici's SnapshotInfo), or null. */
  info(hash: string): SnapshotRecorder.Info | null {
    const list = this.#byHash.get(hash);
    if (list === undefined) return null;
    const last = list[list.length - 1]!.record;
    return {
      hash,
      request: structuredClone(last.request),
      responseCount: list.length,
      callCount: this.#played.get(hash) ?? 0,
      timestamp: last.timestamp,
    };
  }

  /** Forgets every recording under `hash`; false when there was none. */
  delete(hash: string): boolean {
    if (!this.#byHash.delete(hash)) return false;
    this.#played.delete(hash);
    this.#held = this.#held.filter((h) => h.hash !== hash);
    return true;
  }

  /** Playback starts over from each hash's first recording. */
  resetCallCounts(): void {
    this.#played.clear();
  }

  /** Copies of the interactions, in recorded order. */
  getSnapshots(): SnapshotRecord[] {
    return this.#held.map((h) => structuredClone(h.record));
  }

  /** Copies of the interactions as file entries, in recorded order. */
  getEntries(): SnapshotEntry[] {
    return this.#held.map((h) => ({ hash: h.hash, snapshot: structuredClone(h.record) }));
  }

  /** Number of interactions held. */
  size(): number {
    return this.#held.length;
  }

  clear(): void {
    this.#held = [];
    this.#byHash.clear();
    this.#played.clear();
  }

  /** Holds exactly `records` (the newest maxSnapshots of them), with hashes derived again. */
  replace(records: readonly SnapshotRecord[]): void {
    const identified = records.map((record) => ({ ...this.identify(record.request), record: structuredClone(record) }));
    this.clear();
    for (const held of identified.slice(Math.max(0, identified.length - this.#maxSnapshots))) this.#add(held);
  }

  /** Every held interaction with its key, for explaining a miss. */
  candidates(): MissCandidate[] {
    return this.#held.map(({ key, record }) => ({ key, record }));
  }

  #add(held: Held): void {
    this.#held.push(held);
    const list = this.#byHash.get(held.hash);
    if (list === undefined) this.#byHash.set(held.hash, [held]);
    else list.push(held);
  }

  #evictOldest(): void {
    const oldest = this.#held.shift()!;
    const list = this.#byHash.get(oldest.hash)!;
    list.shift();
    if (list.length === 0) {
      this.#byHash.delete(oldest.hash);
      this.#played.delete(oldest.hash);
    } else {
      const n = this.#played.get(oldest.hash);
      if (n !== undefined && n > 0) this.#played.set(oldest.hash, n - 1);
    }
  }
}

export declare namespace SnapshotRecorder {
  interface Info {
    hash: string;
    request: SnapshotRequest;
    /** Recordings held for the request (played in order, the last one repeating). */
    responseCount: number;
    /** Times playback has answered it since the last reset. */
    callCount: number;
    timestamp: string;
  }
}
