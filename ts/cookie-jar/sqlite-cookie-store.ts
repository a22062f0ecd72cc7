// A CookieStore in a SQLite database through node:sqlite (Node >= 22.5): cookies survive a
// restart, and processes using the same file share them. node:sqlite is synchronous, which is
// what the store interface asks for.
import { InvalidArgumentError } from '../core/errors.js';
import { loadSqlite, type Database, type SqlValue, type Statement } from '../core/node-sqlite.js';
import type { CookieStore } from './cookie-store.js';
import type { SameSite, StoredCookie } from './stored-cookie.js';

export interface SqliteCookieStoreOpts {
  /** Database file; ':memory:' (the default) keeps it in memory. */
  location?: string;
}

const TABLE = 'ferro_cookies_v1';
// A writer holding the lock is waited for this long before the statement fails.
const BUSY_TIMEOUT_MS = 1000;
const COLUMNS = 'name, value, domain, path, expires, secure, httpOnly, sameSite, hostOnly, site, creation, lastAccess';

function row(c: StoredCookie): SqlValue[] {
  return [c.name, c.value, c.domain, c.path, c.expires, c.secure ? 1 : 0, c.httpOnly ? 1 : 0, c.sameSite ?? null, c.hostOnly ? 1 : 0, c.site, c.creation, c.lastAccess];
}

function cookieOf(r: Record<string, SqlValue>): StoredCookie {
  const c: StoredCookie = {
    name: r.name as string,
    value: r.value as string,
    domain: r.domain as string,
    path: r.path as string,
    expires: r.expires === null ? null : Number(r.expires),
    secure: r.secure === 1,
    httpOnly: r.httpOnly === 1,
    hostOnly: r.hostOnly === 1,
    site: r.site as string,
    creation: Number(r.creation),
    lastAccess: Number(r.lastAccess),
  };
  if (r.sameSite !== null) c.sameSite = r.sameSite as SameSite;
  return c;
}

export class SqliteCookieStore implements CookieStore {
  readonly #db: Database;
  readonly #bySite: Statement;
  readonly #all: Statement;
  readonly #count: Statement;
  readonly #put: Statement;
  readonly #remove: Statement;

  constructor(opts: SqliteCookieStoreOpts = {}) {
    if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('SqliteCookieStore options must be an object');
    if (opts.location !== undefined && typeof opts.location !== 'string') throw new InvalidArgumentError('location must be a string');
    const { DatabaseSync } = loadSqlite('SqliteCookieStore', 'MemoryCookieStore');
    const db = new DatabaseSync(opts.location ?? ':memory:');
    try {
      db.exec(`
        PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};
        PRAGMA journal_mode = WAL;
        CREATE TABLE IF NOT EXISTS ${TABLE} (
          name TEXT NOT NULL,
          value TEXT NOT NULL,
          domain TEXT NOT NULL,
          path TEXT NOT NULL,
          expires INTEGER,
          secure INTEGER NOT NULL,
          httpOnly INTEGER NOT NULL,
          sameSite TEXT,
          hostOnly INTEGER NOT NULL,
          site TEXT NOT NULL,
          creation INTEGER NOT NULL,
          lastAccess INTEGER NOT NULL,
          PRIMARY KEY (domain, path, name, hostOnly)
        );
        CREATE INDEX IF NOT EXISTS ${TABLE}_site ON ${TABLE} (site);
      `);
      this.#bySite = db.prepare(`SELECT ${COLUMNS} FROM ${TABLE} WHERE site = ?`);
      this.#all = db.prepare(`SELECT ${COLUMNS} FROM ${TABLE}`);
      this.#count = db.prepare(`SELECT COUNT(*) AS n FROM ${TABLE}`);
      this.#put = db.prepare(`INSERT OR REPLACE INTO ${TABLE} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      this.#remove = db.prepare(`DELETE FROM ${TABLE} WHERE domain = ? AND path = ? AND name = ? AND hostOnly = ?`);
    } catch (err) {
      db.close();
      throw err;
    }
    this.#db = db;
  }

  findBySite(site: string): StoredCookie[] {
    return this.#bySite.all(site).map(cookieOf);
  }

  all(): StoredCookie[] {
    return this.#all.all().map(cookieOf);
  }

  count(): number {
    return Number(this.#count.get()?.n ?? 0);
  }

  put(cookie: StoredCookie): void {
    this.#put.run(...row(cookie));
  }

  remove(cookie: StoredCookie): void {
    this.#remove.run(cookie.domain, cookie.path, cookie.name, cookie.hostOnly ? 1 : 0);
  }

  removeAll(): void {
    this.#db.exec(`DELETE FROM ${TABLE}`);
  }

  close(): void {
    this.#db.close();
  }
}
