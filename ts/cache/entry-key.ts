// How requests are identified (by origin and path) and how stores file and select entries: by
// URL and method, then by the request headers the response varies on (RFC 9111 §4.1).
import type { CacheKey, CacheValue } from './cache-store.js';
import { headerText } from './request-headers.js';

export function urlOf(key: Pick<CacheKey, 'origin' | 'path'>): string {
  return `${key.origin}${key.path}`;
}

/** Whether the request headers in `key` select a response stored with `vary`. */
export function varyMatches(vary: CacheValue['vary'], headers: CacheKey['headers']): boolean {
  if (vary === undefined || vary === null) return true;
  for (const [name, expected] of Object.entries(vary)) {
    if (headerText(expected) !== headerText(headers?.[name])) return false;
  }
  return true;
}

/** Whether two stored responses were selected by the same request headers (one replaces the other). */
export function sameVary(a: CacheValue['vary'], b: CacheValue['vary']): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b != null && k in b && headerText(a![k]) === headerText(b[k]));
}

// The last origin parsed: a dispatcher usually sends many requests to the same one.
let lastOrigin: { input: string; origin: string | null } = { input: '', origin: null };

/** The serialized origin of `value` (a string or URL), or null when it has none. */
export function originOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const input = String(value);
  if (input === lastOrigin.input) return lastOrigin.origin;
  let origin: string | null;
  try {
    origin = new URL(input).origin;
    if (origin === 'null') origin = null;
  } catch {
    origin = null;
  }
  lastOrigin = { input, origin };
  return origin;
}
