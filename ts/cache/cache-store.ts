// The cache-store contract (the one undici users implement: get / createWriteStream / delete),
// and the checks the interceptor and the built-in stores run on what they are given.
import type { Readable, Writable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';

/** Methods whose responses may be cached: the safe ones (RFC 9110 §9.2.1). */
export type CacheMethods = 'GET' | 'HEAD' | 'OPTIONS' | 'TRACE';
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** Parsed Cache-Control directives (RFC 9111 §5.2, RFC 5861). Durations are in seconds. */
export interface CacheControlDirectives {
  'max-stale'?: number;
  'min-fresh'?: number;
  'max-age'?: number;
  's-maxage'?: number;
  'stale-while-revalidate'?: number;
  'stale-if-error'?: number;
  public?: true;
  private?: true | string[];
  'no-store'?: true;
  'no-cache'?: true | string[];
  'must-revalidate'?: true;
  'proxy-revalidate'?: true;
  immutable?: true;
  'no-transform'?: true;
  'must-understand'?: true;
  'only-if-cached'?: true;
}

export interface CacheKey {
  origin: string;
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
}

/** A stored response without its body. Times are milliseconds since the epoch. */
export interface CacheValue {
  statusCode: number;
  statusMessage: string;
  headers: Record<string, string | string[]>;
  /** Request header values the response varies on; `null` where the request lacked the header. */
  vary?: Record<string, string | string[] | null>;
  etag?: string;
  cacheControlDirectives?: CacheControlDirectives;
  cachedAt: number;
  staleAt: number;
  deleteAt: number;
}

export type CacheBody =
  | Readable
  | Iterable<Buffer>
  | AsyncIterable<Buffer>
  | Buffer
  | Iterable<string>
  | AsyncIterable<string>
  | string;

export interface GetResult extends CacheValue {
  body?: CacheBody | null;
}

/** The CacheValue fields of `value` alone (a store keeps or returns no more than these). */
export function cacheValueOf(value: CacheValue): CacheValue {
  const out: CacheValue = {
    statusCode: value.statusCode,
    statusMessage: value.statusMessage,
    headers: value.headers,
    cacheControlDirectives: value.cacheControlDirectives,
    cachedAt: value.cachedAt,
    staleAt: value.staleAt,
    deleteAt: value.deleteAt,
  };
  if (value.vary !== undefined) out.vary = value.vary;
  if (value.etag !== undefined) out.etag = value.etag;
  return out;
}

export interface CacheStore {
  get(key: CacheKey): GetResult | undefined | Promise<GetResult | undefined>;
  createWriteStream(key: CacheKey, value: CacheValue): Writable | undefined;
  delete(key: CacheKey): void | Promise<void>;
}

export function assertCacheStore(store: unknown, name = 'store'): asserts store is CacheStore {
  if (typeof store !== 'object' || store === null) {
    throw new InvalidArgumentError(`${name} must be a cache store object, got ${store === null ? 'null' : typeof store}`);
  }
  for (const fn of ['get', 'createWriteStream', 'delete'] as const) {
    if (typeof (store as Record<string, unknown>)[fn] !== 'function') {
      throw new InvalidArgumentError(`${name}.${fn} must be a function`);
    }
  }
}

export function assertCacheKey(key: unknown): asserts key is CacheKey {
  if (typeof key !== 'object' || key === null) {
    throw new InvalidArgumentError(`cache key must be an object, got ${key === null ? 'null' : typeof key}`);
  }
  const k = key as Record<string, unknown>;
  for (const field of ['origin', 'method', 'path'] as const) {
    if (typeof k[field] !== 'string') throw new InvalidArgumentError(`cache key ${field} must be a string`);
  }
}

export function assertCacheValue(value: unknown): asserts value is CacheValue {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidArgumentError(`cache value must be an object, got ${value === null ? 'null' : typeof value}`);
  }
  const v = value as Record<string, unknown>;
  for (const field of ['statusCode', 'cachedAt', 'staleAt', 'deleteAt'] as const) {
    if (typeof v[field] !== 'number') throw new InvalidArgumentError(`cache value ${field} must be a number`);
  }
  if (typeof v.statusMessage !== 'string') throw new InvalidArgumentError('cache value statusMessage must be a string');
  if (typeof v.headers !== 'object' || v.headers === null) {
    throw new InvalidArgumentError('cache value headers must be an object');
  }
}

/** A size or count option: a non-negative integer, or Infinity where `infinite` allows it. */
export function sizeOption(value: unknown, name: string, fallback: number, max = Infinity): number {
  if (value === undefined) return fallback;
  const ok =
    typeof value === 'number' && value >= 0 && (Number.isInteger(value) || value === Infinity) && value <= max;
  if (!ok) {
    const limit = max === Infinity ? '' : ` no greater than ${max}`;
    throw new InvalidArgumentError(`${name} must be a non-negative integer${limit}, got ${String(value)}`);
  }
  return value;
}
