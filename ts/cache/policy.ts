// RFC 9111 (+ RFC 5861) decisions as pure functions of the request, the (stored) response and
// the time: whether to store, when a response goes stale, whether a stored one may be reused,
// how to revalidate it and how a 304 updates it. No I/O here; times are milliseconds.
import { headerList, parseCacheControl } from './cache-control.js';
import type { CacheControlDirectives, CacheValue } from './cache-store.js';
import { parseHttpDate } from './http-date.js';
import type { HeaderRecord } from './request-headers.js';
import { spread } from '../core/spread.js';

export type CacheType = 'shared' | 'private';
type Headers = Record<string, string | string[] | undefined>;

// RFC 9110 §15.1: statuses a cache may give a heuristic freshness lifetime.
const HEURISTIC_STATUSES: ReadonlySet<number> = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);
// Final statuses whose caching rules this cache implements (for must-understand).
const UNDERSTOOD_STATUSES: ReadonlySet<number> = new Set([
  200, 203, 204, 300, 301, 302, 303, 307, 308, 400, 403, 404, 405, 410, 414, 500, 501, 502, 503, 504,
]);
// Headers never stored (RFC 9111 §3.1: hop-by-hop fields) or recomputed when served (age).
const NOT_STORED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authentication-info',
  'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'age',
]);
// RFC 9111 §3.2: a 304 updates every stored field except Content-Length (and, through
// planStore, the fields that are never stored).
const NOT_UPDATED = new Set(['content-length']);
// Request headers that make a request conditional or partial: evaluated by the origin, not here.
export const CONDITIONAL_REQUEST_HEADERS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'range'];
// A stale response is kept this long for revalidation and for requests that accept stale ones.
const STALE_RETENTION_S = 24 * 60 * 60;
// Heuristic lifetime: 10% of the time since Last-Modified (RFC 9111 §4.2.2), at most a day.
const HEURISTIC_MAX_S = 24 * 60 * 60;
// 5xx statuses after which a stale response may stand in (RFC 5861 §4).
export const STALE_IF_ERROR_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Request directives; `Pragma: no-cache` counts as `no-cache` when Cache-Control is absent (§5.4). */
export function requestDirectives(headers: HeaderRecord): CacheControlDirectives {
  if (headers['cache-control'] !== undefined) return parseCacheControl(headers['cache-control']);
  if (/(^|,)\s*no-cache\s*(,|$)/i.test(headerList(headers.pragma))) return { 'no-cache': true };
  return {};
}

/** The field names a response varies on; '*' when it can never be matched. */
export function varyNames(value: string | string[] | undefined): string[] | '*' {
  const names = headerList(value)
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n.length > 0);
  return names.includes('*') ? '*' : names;
}

function hasValidator(headers: Headers): boolean {
  return typeof headers.etag === 'string' || typeof headers['last-modified'] === 'string';
}

function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value;
}

/** Freshness lifetime in seconds, or undefined when the response gives none (§4.2.1, §4.2.2). */
function freshnessLifetime(
  type: CacheType,
  statusCode: number,
  headers: Headers,
  d: CacheControlDirectives,
  responseTime: number,
  cacheByDefaultMs: number | undefined,
): number | undefined {
  if (type === 'shared' && d['s-maxage'] !== undefined) return d['s-maxage'];
  if (d['max-age'] !== undefined) return d['max-age'];
  const date = parseHttpDate(single(headers.date)) ?? responseTime;
  if (headers.expires !== undefined) {
    // An invalid Expires (such as "0") means already expired (§5.3).
    const expires = parseHttpDate(single(headers.expires));
    return expires === undefined ? 0 : Math.max(0, (expires - date) / 1000);
  }
  if (!HEURISTIC_STATUSES.has(statusCode) && d.public !== true) return undefined;
  const lastModified = parseHttpDate(single(headers['last-modified']));
  if (lastModified !== undefined && lastModified <= date) {
    return Math.min(HEURISTIC_MAX_S, Math.floor((date - lastModified) / 10_000));
  }
  if (cacheByDefaultMs !== undefined) return cacheByDefaultMs / 1000;
  return undefined;
}

/** Current age of a just-received response in seconds (§4.2.3). */
function initialAge(headers: Headers, requestTime: number, responseTime: number): number {
  const ageValue = Number(single(headers.age));
  const age = Number.isFinite(ageValue) && ageValue >= 0 ? ageValue : 0;
  const date = parseHttpDate(single(headers.date));
  const apparent = date === undefined ? 0 : Math.max(0, (responseTime - date) / 1000);
  const delay = Math.max(0, (responseTime - requestTime) / 1000);
  return Math.max(apparent, age + delay);
}

export interface StoreInput {
  type: CacheType;
  cacheByDefault: number | undefined;
  statusCode: number;
  statusMessage: string;
  headers: Headers;
  requestHeaders: HeaderRecord;
  requestTime: number;
  responseTime: number;
}

/** What to store for a response, or null when RFC 9111 §3 forbids storing it. */
export function planStore(input: StoreInput): CacheValue | null {
  const { type, statusCode, headers, requestHeaders } = input;
  if (statusCode < 200 || statusCode === 206 || statusCode === 304) return null;
  const d = parseCacheControl(headers['cache-control']);
  // must-understand (§5.2.2.3): store only statuses whose caching rules we know, and then
  // no-store (sent for caches that do not know must-understand) does not apply.
  if (d['must-understand'] === true) {
    if (!UNDERSTOOD_STATUSES.has(statusCode)) return null;
  } else if (d['no-store'] === true) {
    return null;
  }
  if (type === 'shared' && d.private === true) return null;
  // A cookie is set for the one user this response went to; a shared cache would hand it to the
  // next (RFC 9111 §7.3 leaves this to the cache; undici refuses the same way).
  if (type === 'shared' && headers['set-cookie'] !== undefined) return null;
  // §3.5: a shared cache stores answers to authenticated requests only when told it may.
  if (type === 'shared' && requestHeaders.authorization !== undefined) {
    if (d.public !== true && d['must-revalidate'] !== true && d['s-maxage'] === undefined) return null;
  }
  const vary = varyNames(headers.vary);
  if (vary === '*') return null;
  let lifetime = freshnessLifetime(type, statusCode, headers, d, input.responseTime, input.cacheByDefault);
  const validator = hasValidator(headers);
  if (lifetime === undefined) {
    if (d['no-cache'] === true && validator) lifetime = 0;
    else return null;
  }
  const age = initialAge(headers, input.requestTime, input.responseTime);
  const cachedAt = input.responseTime - age * 1000;
  const staleAt = cachedAt + lifetime * 1000;
  // Useless once stale only when it can neither be revalidated nor served stale.
  const reusableStale = validator || !mustRevalidateWhenStale(d, input.type);
  const keep = Math.max(d['stale-while-revalidate'] ?? 0, d['stale-if-error'] ?? 0, reusableStale ? STALE_RETENTION_S : 0);
  const deleteAt = staleAt + keep * 1000;
  if (deleteAt <= input.responseTime) return null;

  const value: CacheValue = {
    statusCode,
    statusMessage: input.statusMessage,
    headers: storedHeaders(headers, d, type),
    cacheControlDirectives: d,
    cachedAt,
    staleAt,
    deleteAt,
  };
  if (vary.length > 0) {
    value.vary = {};
    for (const name of vary) value.vary[name] = requestHeaders[name] ?? null;
  }
  if (typeof headers.etag === 'string') value.etag = headers.etag;
  return value;
}

/** Response headers as stored: no hop-by-hop fields, no fields a directive says not to keep. */
function storedHeaders(headers: Headers, d: CacheControlDirectives, type: CacheType): Record<string, string | string[]> {
  const drop = new Set(NOT_STORED);
  for (const name of headerList(headers.connection).split(',')) drop.add(name.trim().toLowerCase());
  // Qualified no-cache fields may not be reused without revalidation; qualified private fields
  // may not be stored by a shared cache (§5.2.2.4, §5.2.2.7). Dropping them does both.
  if (Array.isArray(d['no-cache'])) for (const f of d['no-cache']) drop.add(f);
  if (type === 'shared' && Array.isArray(d.private)) for (const f of d.private) drop.add(f);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !drop.has(name)) out[name] = value;
  }
  return out;
}

/** Whether a stored response may be served by a cache of `type` (a shared one never replays a cookie). */
export function servable(entry: Pick<CacheValue, 'headers'>, type: CacheType): boolean {
  return type === 'private' || !Object.keys(entry.headers).some((name) => name.toLowerCase() === 'set-cookie');
}

/** Current age of a stored response in whole seconds. */
export function currentAge(entry: Pick<CacheValue, 'cachedAt'>, now: number): number {
  return Math.max(0, Math.floor((now - entry.cachedAt) / 1000));
}

function mustRevalidateWhenStale(d: CacheControlDirectives, type: CacheType): boolean {
  // s-maxage carries proxy-revalidate's meaning for shared caches (§5.2.2.10).
  return d['must-revalidate'] === true || (type === 'shared' && (d['proxy-revalidate'] === true || d['s-maxage'] !== undefined));
}

/**
 * How a stored response may answer a request (§4, RFC 5861 §3):
 * 'fresh' — serve it; 'stale' — serve it stale (the request's max-stale allows);
 * 'stale-while-revalidate' — serve it and revalidate in the background; 'revalidate' — ask first.
 */
export type Reuse = 'fresh' | 'stale' | 'stale-while-revalidate' | 'revalidate';

export function reuse(entry: CacheValue, req: CacheControlDirectives, type: CacheType, now: number): Reuse {
  const d = entry.cacheControlDirectives ?? {};
  if (d['no-cache'] === true || req['no-cache'] === true) return 'revalidate';
  // max-age=0 asks for revalidation even of a response stored this very millisecond.
  const maxAge = req['max-age'];
  if (maxAge !== undefined && (maxAge === 0 || (now - entry.cachedAt) / 1000 > maxAge)) return 'revalidate';
  const remaining = (entry.staleAt - now) / 1000;
  if (remaining > 0) return remaining >= (req['min-fresh'] ?? 0) ? 'fresh' : 'revalidate';
  if (mustRevalidateWhenStale(d, type) || req['min-fresh'] !== undefined) return 'revalidate';
  const staleFor = -remaining;
  if (req['max-stale'] !== undefined && staleFor <= req['max-stale']) return 'stale';
  const swr = d['stale-while-revalidate'];
  if (swr !== undefined && staleFor <= swr) return 'stale-while-revalidate';
  return 'revalidate';
}

/** Whether a stored response may stand in for an error response or a failed request (RFC 5861 §4). */
export function staleIfErrorAllows(entry: CacheValue, req: CacheControlDirectives, type: CacheType, now: number): boolean {
  const d = entry.cacheControlDirectives ?? {};
  if (mustRevalidateWhenStale(d, type)) return false;
  const window = Math.max(d['stale-if-error'] ?? -1, req['stale-if-error'] ?? -1);
  if (window < 0) return false;
  return (now - entry.staleAt) / 1000 <= window;
}

/** Validators for a conditional request revalidating `entry` (§4.3.1). */
export function conditionalHeaders(entry: CacheValue): Record<string, string> {
  const out: Record<string, string> = {};
  const etag = entry.etag ?? single(entry.headers.etag);
  if (etag !== undefined) out['if-none-match'] = etag;
  const lastModified = single(entry.headers['last-modified']);
  if (lastModified !== undefined) out['if-modified-since'] = lastModified;
  return out;
}

/** Stored headers updated from a 304 (§3.2, §4.3.4). */
export function mergeNotModified(
  stored: Record<string, string | string[]>,
  update: Headers,
): Record<string, string | string[]> {
  const out = { ...stored };
  for (const [name, value] of Object.entries(update)) {
    if (value !== undefined && !NOT_UPDATED.has(name)) out[name] = value;
  }
  return out;
}

/** Whether a 304 answers for `entry`: it must not name a different strong validator (§4.3.4). */
export function notModifiedMatches(entry: CacheValue, update: Headers): boolean {
  const etag = single(update.etag);
  const stored = entry.etag ?? single(entry.headers.etag);
  if (etag === undefined || stored === undefined) return true;
  const strip = (e: string): string => (e.startsWith('W/') ? e.slice(2) : e);
  return strip(etag) === strip(stored);
}

/** Headers of a stored response as served, with its current Age (§5.1). */
export function servedHeaders(entry: CacheValue, now: number): Record<string, string | string[]> {
  return spread(entry.headers, { age: String(currentAge(entry, now)) });
}

/**
 * Paths on `origin` a successful unsafe request invalidates (§4.4): its target, and the
 * Location / Content-Location of the response when they are on the same origin.
 */
export function invalidatedPaths(origin: string, path: string, statusCode: number, headers: Headers): string[] {
  if (statusCode < 200 || statusCode >= 400) return [];
  const paths = [path];
  let base: URL;
  try {
    base = new URL(path, origin);
  } catch {
    return paths;
  }
  for (const name of ['location', 'content-location']) {
    const value = single(headers[name]);
    if (value === undefined) continue;
    try {
      const url = new URL(value, base);
      if (url.origin === base.origin) paths.push(url.pathname + url.search);
    } catch {
      // An unparseable reference invalidates nothing.
    }
  }
  return [...new Set(paths)];
}
