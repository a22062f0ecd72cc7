// A cache store in a SQLite database through node:sqlite (Node >= 22.5), so cached responses
// survive a restart and are shared by processes using the same file. A database that is
// corrupt, locked or otherwise failing degrades to cache misses with a warning, never an error.
import type { Writable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';
import { loadSqlite, type Database, type SqlValue, type Statement } from '../core/node-sqlite.js';
import {
  assertCacheKey,
  assertCacheValue,
  sizeOption,
  type CacheKey,
  type CacheStore,
  type CacheValue,
  type GetResult,
} from './cache-store.js';
import { bodyCollector } from './body-collector.js';
import { sameVary, urlOf, varyMatches } from './entry-key.js';
import { warnStore } from './store-writer.js';

export interface SqliteCacheStoreOpts {
  /** Database file; ':memory:' (the default) keeps it in memory. */
  location?: string;
  /** Most responses kept; the least recently used go first. Default Infinity. */
  maxCount?: number;
  /** Largest body kept, in bytes. Default and maximum 2 GB. */
  maxEntrySize?: number;
}

const MAX_ENTRY_SIZE = 2_000_000_000;
const TABLE = 'ferro_cache_v1';
// A writer holding the lock is waited for this long, then the operation counts as a miss.
const BUSY_TIMEOUT_MS = 50;

interface Statements {
  get: Statement;
  touch: Statement;
  sameKey: Statement;
  update: Statement;
  insert: Statement;
  deleteUrl: Statement;
  purgeExpired: Statement;
  count: Statement;
  evict: Statement;
}

export class SqliteCacheStore implements CacheStore {
  readonly #maxCount: number;
  readonly #maxEntrySize: number;
  #db: Database | null = null;
  #sql: Statements | null = null;

  constructor(opts: SqliteCacheStoreOpts = {}) {
    if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('SqliteCacheStore options must be an object');
    if (opts.location !== undefined && typeof opts.location !== 'string') {
      throw new InvalidArgumentError('location must be a string');
    }
    this.#maxCount = sizeOption(opts.maxCount, 'maxCount', Infinity);
    this.#maxEntrySize = sizeOption(opts.maxEntrySize, 'maxEntrySize', MAX_ENTRY_SIZE, MAX_ENTRY_SIZE);
    const { DatabaseSync } = loadSqlite('SqliteCacheStore', 'MemoryCacheStore');
    try {
      this.#db = new DatabaseSync(opts.location ?? ':memory:');
      this.#db.exec(`
        PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};
        PRAGMA journal_mode = WAL;
        CREATE TABLE IF NOT EXISTS ${TABLE} (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          url TEXT NOT NULL,
          method TEXT NOT NULL,
          body BLOB NOT NULL,
          statusCode INTEGER NOT NULL,
          statusMessage TEXT NOT NULL,
          headers TEXT NOT NULL,
          vary TEXT,
          etag TEXT,
          cacheControlDirectives TEXT,
          cachedAt INTEGER NOT NULL,
          staleAt INTEGER NOT NULL,
          deleteAt INTEGER NOT NULL,
          usedAt INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS ${TABLE}_url ON ${TABLE} (url, method);
        CREATE INDEX IF NOT EXISTS ${TABLE}_deleteAt ON ${TABLE} (deleteAt);
        CREATE INDEX IF NOT EXISTS ${TABLE}_usedAt ON ${TABLE} (usedAt);
      `);
      this.#sql = this.#prepare(this.#db);
    } catch (err) {
      // Corrupt, unreadable or locked: every operation is a miss from here on.
      warnStore(this, err);
      this.#close();
    }
  }

  #prepare(db: Database): Statements {
    const columns = 'body, statusCode, statusMessage, headers, vary, etag, cacheControlDirectives, cachedAt, staleAt, deleteAt';
    return {
      get: db.prepare(`SELECT id, ${columns} FROM ${TABLE} WHERE url = ? AND method = ? AND deleteAt > ? ORDER BY id DESC`),
      // usedAt is a use counter shared by every process on the file (clock ties would blur LRU order).
      touch: db.prepare(`UPDATE ${TABLE} SET usedAt = (SELECT COALESCE(MAX(usedAt), 0) + 1 FROM ${TABLE}) WHERE id = ?`),
      sameKey: db.prepare(`SELECT id, vary FROM ${TABLE} WHERE url = ? AND method = ?`),
      update: db.prepare(
        `UPDATE ${TABLE} SET body = ?, statusCode = ?, statusMessage = ?, headers = ?, vary = ?, etag = ?,
         cacheControlDirectives = ?, cachedAt = ?, staleAt = ?, deleteAt = ?,
         usedAt = (SELECT COALESCE(MAX(usedAt), 0) + 1 FROM ${TABLE}) WHERE id = ?`,
      ),
      insert: db.prepare(
        `INSERT INTO ${TABLE} (body, statusCode, statusMessage, headers, vary, etag, cacheControlDirectives,
         cachedAt, staleAt, deleteAt, url, method, usedAt)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(usedAt), 0) + 1 FROM ${TABLE}))`,
      ),
      deleteUrl: db.prepare(`DELETE FROM ${TABLE} WHERE url = ?`),
      purgeExpired: db.prepare(`DELETE FROM ${TABLE} WHERE deleteAt <= ?`),
      count: db.prepare(`SELECT COUNT(*) AS n FROM ${TABLE}`),
      evict: db.prepare(`DELETE FROM ${TABLE} WHERE id IN (SELECT id FROM ${TABLE} ORDER BY usedAt ASC, id ASC LIMIT ?)`),
    };
  }

  /** Runs `fn` against the database; a failure is a warning and `fallback`. */
  #use<T>(fallback: T, fn: (sql: Statements) => T): T {
    if (this.#sql === null) return fallback;
    try {
      return fn(this.#sql);
    } catch (err) {
      warnStore(this, err);
      return fallback;
    }
  }

  #close(): void {
    try {
      this.#db?.close();
    } catch {
      // Already unusable; nothing more to release.
    }
    this.#db = null;
    this.#sql = null;
  }

  /** Number of stored responses. */
  get size(): number {
    return this.#use(0, (sql) => Number(sql.count.get()?.n ?? 0));
  }

  close(): void {
    this.#close();
  }

  get(key: CacheKey): GetResult | undefined {
    assertCacheKey(key);
    return this.#use(undefined, (sql) => {
      const now = Date.now();
      for (const row of sql.get.all(urlOf(key), key.method, now)) {
        const vary = row.vary === null ? undefined : (JSON.parse(String(row.vary)) as CacheValue['vary']);
        if (!varyMatches(vary, key.headers)) continue;
        try {
          sql.touch.run(row.id!);
        } catch {
          // Another process holds the write lock: the hit stands, only its LRU position is not updated.
        }
        const body = row.body as Uint8Array;
        const result: GetResult = {
          body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
          statusCode: Number(row.statusCode),
          statusMessage: String(row.statusMessage),
          headers: JSON.parse(String(row.headers)) as CacheValue['headers'],
          cacheControlDirectives: row.cacheControlDirectives === null ? undefined : JSON.parse(String(row.cacheControlDirectives)),
          cachedAt: Number(row.cachedAt),
          staleAt: Number(row.staleAt),
          deleteAt: Number(row.deleteAt),
        };
        if (vary !== undefined) result.vary = vary;
        if (row.etag !== null) result.etag = String(row.etag);
        return result;
      }
      return undefined;
    });
  }

  /** Stores a whole response; a body over maxEntrySize is not stored. */
  set(key: CacheKey, value: CacheValue & { body: Buffer | Buffer[] | null }): void {
    assertCacheKey(key);
    assertCacheValue(value);
    const body = value.body === null ? Buffer.alloc(0) : Array.isArray(value.body) ? Buffer.concat(value.body) : value.body;
    if (body.length > this.#maxEntrySize) return;
    this.#use(undefined, (sql) => {
      const now = Date.now();
      const url = urlOf(key);
      const varyJson = value.vary === undefined ? null : JSON.stringify(value.vary);
      const fields: SqlValue[] = [
        body,
        value.statusCode,
        value.statusMessage,
        JSON.stringify(value.headers),
        varyJson,
        value.etag ?? null,
        value.cacheControlDirectives === undefined ? null : JSON.stringify(value.cacheControlDirectives),
        value.cachedAt,
        value.staleAt,
        value.deleteAt,
      ];
      // The same method and the same varying request headers: replace, not add.
      const existing = sql.sameKey
        .all(url, key.method)
        .find((row) => sameVary(row.vary === null ? undefined : JSON.parse(String(row.vary)), value.vary));
      if (existing !== undefined) sql.update.run(...fields, existing.id!);
      else sql.insert.run(...fields, url, key.method);
      this.#prune(sql, now);
    });
  }

  #prune(sql: Statements, now: number): void {
    if (this.#maxCount === Infinity) return;
    sql.purgeExpired.run(now);
    const count = Number(sql.count.get()?.n ?? 0);
    if (count > this.#maxCount) sql.evict.run(count - this.#maxCount);
  }

  createWriteStream(key: CacheKey, value: CacheValue): Writable | undefined {
    assertCacheKey(key);
    assertCacheValue(value);
    return bodyCollector(this.#maxEntrySize, (chunks) => this.set(key, { ...value, body: chunks }));
  }

  delete(key: CacheKey): void {
    assertCacheKey(key);
    this.#use(undefined, (sql) => void sql.deleteUrl.run(urlOf(key)));
  }
}
