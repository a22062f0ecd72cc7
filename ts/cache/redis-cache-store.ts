// A cache store on Redis or Valkey, shared by every process and machine using the same server
// and key prefix. Each URL has a hash of its stored responses (one field per method and set of
// varying request headers) whose entries point to body lists; every key expires with the
// response's stale window, and the server's maxmemory policy bounds the total. A server that is
// down or slow means cache misses and a CacheStoreWarning, never a failed or hanging request.
import { createHash } from 'node:crypto';
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
import { urlOf, varyMatches } from './entry-key.js';
import { headerText } from './request-headers.js';
import { RedisBodyWriter, bodyKeyOf, type StoredMeta } from './redis-body-writer.js';
import { RedisLink, connectTo, type RedisClientLike } from './redis-client.js';
import { warnStore } from './store-writer.js';

export type { RedisClientLike } from './redis-client.js';

export interface RedisCacheStoreOpts {
  /** Server to connect to (`redis://`, `rediss://`); needs the iovalkey package. */
  url?: string;
  /** An existing iovalkey / ioredis client instead of `url`; the store never closes it. */
  client?: RedisClientLike;
  /** Put before every key, so applications sharing a server keep apart. Default 'ferro:cache:'. */
  keyPrefix?: string;
  /** Largest body kept, in bytes. Default 5 MiB. */
  maxEntrySize?: number;
  /** Milliseconds a command may take before it counts as a miss. Default 500. */
  commandTimeout?: number;
}

const MAX_ENTRY_SIZE = 2_000_000_000;

export class RedisCacheStore implements CacheStore {
  readonly #link: RedisLink;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #maxEntrySize: number;
  /** Writers per URL hash, so that a get() after a writer ended reads what it filed. */
  readonly #writers = new Map<string, Set<RedisBodyWriter>>();

  constructor(opts: RedisCacheStoreOpts) {
    if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('RedisCacheStore options must be an object');
    const { url, client, keyPrefix = 'ferro:cache:' } = opts;
    if ((url === undefined) === (client === undefined)) {
      throw new InvalidArgumentError('RedisCacheStore needs exactly one of url or client');
    }
    if (url !== undefined && typeof url !== 'string') throw new InvalidArgumentError('url must be a string');
    if (client !== undefined && (typeof client !== 'object' || client === null || typeof client.call !== 'function')) {
      throw new InvalidArgumentError('client must be an iovalkey or ioredis client');
    }
    if (typeof keyPrefix !== 'string') throw new InvalidArgumentError('keyPrefix must be a string');
    this.#prefix = keyPrefix;
    this.#maxEntrySize = sizeOption(opts.maxEntrySize, 'maxEntrySize', 5 * 1024 * 1024, MAX_ENTRY_SIZE);
    const timeout = sizeOption(opts.commandTimeout, 'commandTimeout', 500);
    if (timeout === 0 || timeout === Infinity) throw new InvalidArgumentError('commandTimeout must be a positive finite number of ms');
    this.#ownsClient = client === undefined;
    const redis = client ?? connectTo(url!, timeout);
    // Our own client's connection errors become warnings (iovalkey logs unhandled ones).
    if (this.#ownsClient) redis.on('error', (err) => warnStore(this, err));
    this.#link = new RedisLink(redis, timeout);
  }

  /** The client in use (the one given, or the one made for `url`). */
  get client(): RedisClientLike {
    return this.#link.client;
  }

  /** Resolves when the responses whose bodies have ended are filed (or have failed). */
  async flush(): Promise<void> {
    const ended = [...this.#writers.values()].flatMap((set) => [...set]).filter((w) => w.writableEnded);
    await Promise.all(ended.map(settled));
  }

  /**
   * Files the responses whose bodies have ended and drops unfinished ones, then closes the
   * connection the store opened for `url` (a client given as { client } is left open).
   */
  async close(): Promise<void> {
    for (const set of this.#writers.values()) for (const w of set) if (!w.writableEnded) w.destroy();
    await this.flush();
    if (!this.#ownsClient) return;
    const client = this.#link.client;
    if (client.status === 'ready') await this.#link.bounded(client.quit()).catch(() => client.disconnect());
    else client.disconnect();
  }

  get(key: CacheKey): Promise<GetResult | undefined> {
    assertCacheKey(key);
    const index = this.#indexKey(key);
    const ended = [...(this.#writers.get(index) ?? [])].filter((w) => w.writableEnded);
    const lookup = async (): Promise<GetResult | undefined> => {
      if (ended.length > 0) await Promise.all(ended.map(settled));
      return this.#lookup(index, key);
    };
    return lookup().catch((err: unknown) => {
      warnStore(this, err);
      return undefined;
    });
  }

  async #lookup(index: string, key: CacheKey): Promise<GetResult | undefined> {
    const fields = (await this.#link.call('hgetall', index)) as Record<string, string>;
    const now = Date.now();
    let best: StoredMeta | undefined;
    let bestField = '';
    const expired: string[] = [];
    for (const [field, json] of Object.entries(fields)) {
      const meta = parseMeta(json);
      if (meta === null || meta.deleteAt <= now) {
        expired.push(field);
        continue;
      }
      if (!field.startsWith(`${key.method}\n`) || !varyMatches(meta.vary, key.headers)) continue;
      if (best === undefined || meta.cachedAt > best.cachedAt) {
        best = meta;
        bestField = field;
      }
    }
    if (expired.length > 0) this.#drop(index, expired, expired.map((f) => bodyKeyOf(fields[f]!)));
    if (best === undefined) return undefined;
    const body = best.body === null ? [] : ((await this.#link.callBuffer('lrange', best.body, 0, -1)) as Buffer[]);
    const size = body.reduce((n, b) => n + b.length, 0);
    if (body.length !== best.chunks || size !== best.size) {
      // The body was evicted (maxmemory) or replaced meanwhile: a miss, and the entry goes.
      this.#drop(index, [bestField], [best.body]);
      return undefined;
    }
    return { ...cacheValueOf(best), body };
  }

  createWriteStream(key: CacheKey, value: CacheValue): Writable | undefined {
    assertCacheKey(key);
    assertCacheValue(value);
    if (value.deleteAt <= Date.now()) return undefined;
    if (!this.#link.usable()) {
      warnStore(this, new Error(`Redis is unavailable (connection ${this.#link.client.status})`));
      return undefined;
    }
    const index = this.#indexKey(key);
    const writer = new RedisBodyWriter({
      link: this.#link,
      index,
      field: fieldOf(key.method, value.vary),
      bodyPrefix: `${index}:body:`,
      meta: cacheValueOf(value),
      maxEntrySize: this.#maxEntrySize,
    });
    let set = this.#writers.get(index);
    if (set === undefined) this.#writers.set(index, (set = new Set()));
    set.add(writer);
    writer.once('close', () => {
      set.delete(writer);
      if (set.size === 0 && this.#writers.get(index) === set) this.#writers.delete(index);
    });
    return writer;
  }

  /** Drops every response stored for the key's URL (all methods and variants). */
  delete(key: CacheKey): Promise<void> {
    assertCacheKey(key);
    const index = this.#indexKey(key);
    // Issued now, in one transaction: a get() after this call cannot see the old entries.
    let done: Promise<unknown[]>;
    try {
      done = this.#link.transaction([['hvals', index], ['del', index]]);
    } catch (err) {
      warnStore(this, err);
      return Promise.resolve();
    }
    return done.then(
      ([values]) => this.#unlink((values as string[]).map(bodyKeyOf)),
      (err: unknown) => warnStore(this, err),
    );
  }

  #indexKey(key: CacheKey): string {
    // The {hash tag} keeps a URL's hash and its bodies in one Redis Cluster slot.
    const tag = createHash('sha1').update(urlOf(key)).digest('hex');
    return `${this.#prefix}{${tag}}`;
  }

  /** Removes fields of a URL's hash and their bodies, in the background. */
  #drop(index: string, fields: string[], bodies: (string | null)[]): void {
    this.#background(['hdel', index, ...fields]);
    this.#unlink(bodies);
  }

  #unlink(bodies: (string | null)[]): void {
    const keys = bodies.filter((b): b is string => b !== null);
    if (keys.length > 0) this.#background(['unlink', ...keys]);
  }

  /** A clean-up command whose outcome does not matter: unreachable keys expire by themselves. */
  #background(command: [string, ...string[]]): void {
    try {
      this.#link.call(...command).catch(() => {});
    } catch {
      // Redis unavailable right now.
    }
  }
}

/** The hash field for a response: its method and the request header values it varies on. */
function fieldOf(method: string, vary: CacheValue['vary']): string {
  const names = Object.keys(vary ?? {}).sort();
  return `${method}\n${JSON.stringify(names.map((n) => [n, headerText(vary![n])]))}`;
}

function parseMeta(json: string): StoredMeta | null {
  try {
    const meta = JSON.parse(json) as StoredMeta;
    return typeof meta === 'object' && meta !== null && typeof meta.deleteAt === 'number' ? meta : null;
  } catch {
    return null;
  }
}

/** Resolves when the writer has filed its entry or given up. */
function settled(writer: Writable): Promise<void> {
  if (writer.closed || writer.destroyed) return Promise.resolve();
  return new Promise((resolve) => writer.once('close', resolve));
}
