// A cache composed outside the redirect interceptor gets, for a request that was redirected, the
// final response of the chain, not the answer of the URL it asked for. Filing it under that URL is
// an alias the origin never stated; it is allowed only when nothing about the chain is particular
// to the caller or to another party, and for no longer than every hop allowed (GHSA-7xg3,
// GHSA-mqg3, GHSA-4w7w, GHSA-75vm). The same record says whether a 304 came from the URL being
// revalidated (GHSA-5rm8).
import type { FollowedRedirect } from '../handler/redirect-handler.js';
import { parseCacheControl } from './cache-control.js';
import type { CacheKey, CacheValue } from './cache-store.js';
import { urlOf } from './entry-key.js';
import { planStore, varyNames } from './policy.js';
import type { HeaderRecord } from './request-headers.js';
import type { CacheContext } from './store-writer.js';

// What identifies the caller to the origin. A redirect chosen by it (`/me` -> `/users/alice`)
// does not vary on anything the cache could key on.
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

function sameUrl(href: string, key: CacheKey): boolean {
  try {
    const a = new URL(href);
    const b = new URL(urlOf(key));
    return a.origin === b.origin && a.pathname === b.pathname && a.search === b.search;
  } catch {
    return false;
  }
}

/** Whether the response came from the URL of `key` itself (no redirect, or one that led back to it). */
export function answeredByKey(hops: readonly FollowedRedirect[] | undefined, key: CacheKey): boolean {
  if (hops === undefined || hops.length === 0) return true;
  const last = hops[hops.length - 1]!.to;
  return last !== null && sameUrl(last, key);
}

/**
 * `value` (the chain's final response, as planStore made it) as it may be filed under `key`, or
 * null when the chain must not be stored there: a credentialed request, a hop to another origin
 * (even one that comes back), a hop a cache could not store and reuse as it stands.
 */
export function foldChain(
  value: CacheValue,
  hops: readonly FollowedRedirect[],
  key: CacheKey,
  ctx: CacheContext,
  now: number,
): CacheValue | null {
  const requestHeaders = (key.headers ?? {}) as HeaderRecord;
  if (CREDENTIALS.some((name) => requestHeaders[name] !== undefined)) return null;
  let staleAt = value.staleAt;
  const vary = new Set(Object.keys(value.vary ?? {}));
  for (const hop of hops) {
    if (hop.to === null || !sameOrigin(hop.to, key.origin)) return null;
    const stored = planStore({
      type: ctx.type,
      cacheByDefault: ctx.cacheByDefault,
      statusCode: hop.statusCode,
      statusMessage: '',
      headers: hop.headers,
      requestHeaders,
      requestTime: hop.receivedAt,
      responseTime: hop.receivedAt,
    });
    // A hop that must be revalidated before reuse cannot be: only the final response is stored.
    if (stored === null || parseCacheControl(hop.headers['cache-control'])['no-cache'] !== undefined) return null;
    staleAt = Math.min(staleAt, stored.staleAt);
    const names = varyNames(hop.headers.vary);
    if (names === '*') return null;
    for (const name of names) vary.add(name);
  }
  if (staleAt <= now) return null;
  const directives = { ...value.cacheControlDirectives, 'must-revalidate': true as const };
  // Once stale the alias is gone: it is never served stale, and a revalidation of it would be
  // answered by another URL (see answeredByKey).
  delete directives['stale-while-revalidate'];
  delete directives['stale-if-error'];
  const folded: CacheValue = { ...value, cacheControlDirectives: directives, staleAt, deleteAt: staleAt };
  if (vary.size > 0) {
    folded.vary = {};
    for (const name of vary) folded.vary[name] = requestHeaders[name] ?? null;
  }
  return folded;
}

function sameOrigin(href: string, origin: string): boolean {
  try {
    return new URL(href).origin === origin;
  } catch {
    return false;
  }
}
