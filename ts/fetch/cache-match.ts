// The Cache API's request matching (Service Workers §5.4.4, "request matches cached item"):
// same URL without fragment (and query, with ignoreSearch), GET unless ignoreMethod, and every
// header the stored response's Vary names equal in both requests unless ignoreVary.

import type { CacheQueryOptions } from './cache-types.js';

/** A Vary (or any list) header's field values, trimmed, empty ones left out. */
export function varyFields(response: Response): string[] {
  const vary = response.headers.get('vary');
  return vary === null ? [] : vary.split(',').map((v) => v.trim()).filter((v) => v !== '');
}

function comparableUrl(url: string, ignoreSearch: boolean): string {
  const u = new URL(url);
  u.hash = '';
  if (ignoreSearch) u.search = '';
  return u.href;
}

export function requestMatches(query: Request, stored: Request, response: Response | null, options: CacheQueryOptions = {}): boolean {
  if (!options.ignoreMethod && query.method !== 'GET') return false;
  const ignoreSearch = options.ignoreSearch === true;
  if (comparableUrl(query.url, ignoreSearch) !== comparableUrl(stored.url, ignoreSearch)) return false;
  if (response === null || options.ignoreVary) return true;
  for (const field of varyFields(response)) {
    if (field === '*' || query.headers.get(field) !== stored.headers.get(field)) return false;
  }
  return true;
}
