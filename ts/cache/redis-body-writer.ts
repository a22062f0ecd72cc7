// The Writable a RedisCacheStore hands out: body chunks go to a fresh Redis list as they arrive
// (gathered to CHUNK_SIZE, so a large body never sits whole in memory), and on finish one
// transaction files the entry under its URL. A body over maxEntrySize, a destroyed stream or a
// failed command leaves no entry behind, never a truncated one.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { CacheValue } from './cache-store.js';
import type { RedisLink } from './redis-client.js';

/** Bytes per list element. */
const CHUNK_SIZE = 64 * 1024;
/** How long a replaced body stays readable for a get() that already picked it. */
const REPLACED_BODY_GRACE_MS = 10_000;

/** What is kept in the URL's hash for one response; the body is in the list `body`. */
export interface StoredMeta extends CacheValue {
  /** The body's list key, or null for an empty body. */
  body: string | null;
  size: number;
  chunks: number;
}

export interface WriteTarget {
  link: RedisLink;
  /** The URL's hash, and the field this response is filed under in it. */
  index: string;
  field: string;
  /** Prefix for the body's key (shares the hash tag of `index`). */
  bodyPrefix: string;
  meta: CacheValue;
  maxEntrySize: number;
}

export class RedisBodyWriter extends Writable {
  readonly #t: WriteTarget;
  readonly #bodyKey: string;
  readonly #ttl: number;
  #pending: Buffer[] = [];
  #pendingSize = 0;
  #size = 0;
  #chunks = 0;
  /** Replies to the chunk pushes, awaited with the filing. */
  #pushes: Promise<unknown>[] = [];
  #committed = false;

  constructor(target: WriteTarget) {
    super();
    this.#t = target;
    this.#bodyKey = `${target.bodyPrefix}${randomUUID()}`;
    // Ends with the response's stale window; at least 1 ms, Redis refuses 0.
    this.#ttl = Math.max(1, Math.ceil(target.meta.deleteAt - Date.now()));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.#size += chunk.length;
    if (this.#size > this.#t.maxEntrySize) {
      callback(new RangeError(`response body exceeds maxEntrySize (${this.#t.maxEntrySize} bytes)`));
      return;
    }
    this.#pending.push(chunk);
    this.#pendingSize += chunk.length;
    try {
      this.#flush(false);
    } catch (err) {
      callback(err as Error);
      return;
    }
    // Not waiting for the reply: the pushes are ordered on the connection and awaited in _final.
    callback();
  }

  /** Pushes the gathered bytes as CHUNK_SIZE elements; `all` also pushes a shorter tail. */
  #flush(all: boolean): void {
    if (this.#pendingSize === 0 || (!all && this.#pendingSize < CHUNK_SIZE)) return;
    const data = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingSize);
    const pieces: Buffer[] = [];
    let offset = 0;
    for (; offset + CHUNK_SIZE <= data.length; offset += CHUNK_SIZE) pieces.push(data.subarray(offset, offset + CHUNK_SIZE));
    const tail = data.subarray(offset);
    if (all && tail.length > 0) pieces.push(tail);
    this.#pending = all || tail.length === 0 ? [] : [tail];
    this.#pendingSize = all ? 0 : tail.length;
    const first = this.#chunks === 0;
    this.#chunks += pieces.length;
    const push = this.#t.link.call('rpush', this.#bodyKey, ...pieces);
    // Handled here so that a failure before _final is not an unhandled rejection; _final rethrows it.
    push.catch(() => {});
    this.#pushes.push(push);
    if (first) {
      const expire = this.#t.link.call('pexpire', this.#bodyKey, this.#ttl);
      expire.catch(() => {});
      this.#pushes.push(expire);
    }
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.#commit().then(
      () => callback(),
      (err: Error) => callback(err),
    );
  }

  async #commit(): Promise<void> {
    this.#flush(true);
    const { link, index, field, meta } = this.#t;
    const stored: StoredMeta = { ...meta, body: this.#chunks === 0 ? null : this.#bodyKey, size: this.#size, chunks: this.#chunks };
    const commands: (string | number)[][] = [
      ['hget', index, field],
      ['hset', index, field, JSON.stringify(stored)],
      // The hash lives as long as its longest-lived response: set on a new hash, raised on an old one.
      ['pexpire', index, this.#ttl, 'NX'],
      ['pexpire', index, this.#ttl, 'GT'],
    ];
    if (stored.body !== null) commands.push(['pexpire', stored.body, this.#ttl]);
    // Sent right behind the pushes on the same connection, not after their replies: a push that
    // failed leaves a short body, which get() takes for a miss and drops.
    const filed = link.transaction(commands);
    const [[previous]] = await Promise.all([filed, ...this.#pushes]);
    this.#committed = true;
    const oldBody = typeof previous === 'string' ? bodyKeyOf(previous) : null;
    // The replaced body outlives the swap briefly, for a reader that fetched the old entry.
    if (oldBody !== null) link.call('pexpire', oldBody, REPLACED_BODY_GRACE_MS, 'LT').catch(() => {});
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    if (!this.#committed && this.#chunks > 0) {
      try {
        this.#t.link.call('unlink', this.#bodyKey).catch(() => {});
      } catch {
        // Unreachable server: the body list expires by itself.
      }
    }
    callback(err);
  }
}

/** The body key recorded in a stored meta, or null (empty body, or not ours). */
export function bodyKeyOf(json: string): string | null {
  try {
    const body = (JSON.parse(json) as Partial<StoredMeta>).body;
    return typeof body === 'string' ? body : null;
  } catch {
    return null;
  }
}
