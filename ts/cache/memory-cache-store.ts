// In-memory cache store with size and count bounds, least-recently-used eviction. Responses
// larger than maxEntrySize are skipped whole (never stored truncated).
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';
import {
  assertCacheKey,
  assertCacheValue,
  cacheValueOf,
  sizeOption,
  type CacheKey,
  type CacheStore,
  type CacheValue,
  type GetResult,
} from './cache-store.js';
import { bodyCollector } from './body-collector.js';
import { sameVary, urlOf, varyMatches } from './entry-key.js';

export interface MemoryCacheStoreOpts {
  /** Most responses kept. Default 1024. */
  maxCount?: number;
  /** Most bytes of bodies kept in total. Default 100 MiB. */
  maxSize?: number;
  /** Largest body kept, in bytes. Default 5 MiB. */
  maxEntrySize?: number;
  errorCallback?: (err: Error) => void;
}

interface Entry {
  url: string;
  method: string;
  size: number;
  vary: CacheValue['vary'];
  deleteAt: number;
  /** What get() returns, built once: a hit costs no copying. */
  result: GetResult;
}

export class MemoryCacheStore extends EventEmitter implements CacheStore {
  readonly #maxCount: number;
  readonly #maxSize: number;
  readonly #maxEntrySize: number;
  readonly #errorCallback: ((err: Error) => void) | undefined;
  // url → entries for it, most recent first.
  readonly #byUrl = new Map<string, Entry[]>();
  // Every entry in use order, least recently used first (a Set keeps insertion order).
  readonly #lru = new Set<Entry>();
  #size = 0;

  constructor(opts: MemoryCacheStoreOpts = {}) {
    super();
    if (typeof opts !== 'object' || opts === null) {
      throw new InvalidArgumentError('MemoryCacheStore options must be an object');
    }
    this.#maxCount = sizeOption(opts.maxCount, 'maxCount', 1024);
    this.#maxSize = sizeOption(opts.maxSize, 'maxSize', 100 * 1024 * 1024);
    this.#maxEntrySize = sizeOption(opts.maxEntrySize, 'maxEntrySize', 5 * 1024 * 1024);
    if (opts.errorCallback !== undefined && typeof opts.errorCallback !== 'function') {
      throw new InvalidArgumentError('errorCallback must be a function');
    }
    this.#errorCallback = opts.errorCallback;
  }

  /** Total bytes of stored bodies. */
  get size(): number {
    return this.#size;
  }

  /** Number of stored responses. */
  get count(): number {
    return this.#lru.size;
  }

  isFull(): boolean {
    return this.#size >= this.#maxSize || this.#lru.size >= this.#maxCount;
  }

  get(key: CacheKey): GetResult | undefined {
    assertCacheKey(key);
    const entries = this.#byUrl.get(urlOf(key));
    if (entries === undefined) return undefined;
    const now = Date.now();
    const entry = entries.find((e) => e.method === key.method && e.deleteAt > now && varyMatches(e.vary, key.headers));
    if (entry === undefined) return undefined;
    this.#lru.delete(entry);
    this.#lru.add(entry);
    return entry.result;
  }

  createWriteStream(key: CacheKey, value: CacheValue): Writable | undefined {
    assertCacheKey(key);
    assertCacheValue(value);
    return bodyCollector(this.#maxEntrySize, (chunks, size) => this.#commit(key, value, chunks, size)).on(
      'error',
      (err: Error) => this.#errorCallback?.(err),
    );
  }

  delete(key: CacheKey): void {
    assertCacheKey(key);
    const url = urlOf(key);
    const entries = this.#byUrl.get(url);
    if (entries === undefined) return;
    for (const e of entries) this.#forget(e);
    this.#byUrl.delete(url);
  }

  #commit(key: CacheKey, value: CacheValue, body: Buffer[], size: number): void {
    const url = urlOf(key);
    const result: GetResult = { ...cacheValueOf(value), body };
    const entry: Entry = { url, method: key.method, size, vary: value.vary, deleteAt: value.deleteAt, result };
    const entries = this.#byUrl.get(url) ?? [];
    // A response for the same method and the same varying request headers replaces the old one.
    const kept = entries.filter((e) => {
      const replaced = e.method === entry.method && sameVary(e.vary, entry.vary);
      if (replaced) this.#forget(e);
      return !replaced;
    });
    kept.unshift(entry);
    this.#byUrl.set(url, kept);
    this.#lru.add(entry);
    this.#size += size;
    this.#evict();
  }

  #forget(entry: Entry): void {
    if (this.#lru.delete(entry)) this.#size -= entry.size;
  }

  #evict(): void {
    if (this.#size <= this.#maxSize && this.#lru.size <= this.#maxCount) return;
    // Once per overflow: eviction below brings the store back under both limits.
    this.emit('maxSizeExceeded', { size: this.#size, maxSize: this.#maxSize, count: this.#lru.size, maxCount: this.#maxCount });
    for (const entry of this.#lru) {
      if (this.#size <= this.#maxSize && this.#lru.size <= this.#maxCount) break;
      this.#forget(entry);
      const siblings = this.#byUrl.get(entry.url);
      const rest = siblings?.filter((e) => e !== entry) ?? [];
      if (rest.length === 0) this.#byUrl.delete(entry.url);
      else this.#byUrl.set(entry.url, rest);
    }
  }
}
