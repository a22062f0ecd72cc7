// Rewrites request headers given in any LibHeaders form (record, flat array, [name, value] pairs,
// Headers / Map): what redirects and resumed retries send differs from the original request.
import { hasSafeIterator } from '../core/headers.js';
import type { LibHeaders } from '../core/types.js';

type Value = string | string[] | number | undefined;

function entries(headers: LibHeaders | undefined): [string, Value][] {
  if (headers == null) return [];
  const out: [string, Value][] = [];
  if (Array.isArray(headers)) {
    // A flat [name, value, ...] list, or (Object.entries-style) a list of pairs.
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const pair of headers as unknown as [string, Value][]) out.push([pair[0], pair[1]]);
    } else {
      for (let i = 0; i + 1 < headers.length; i += 2) out.push([headers[i] as string, headers[i + 1] as Value]);
    }
    return out;
  }
  if (hasSafeIterator(headers)) {
    for (const [k, v] of headers as Iterable<[string, Value]>) out.push([k, v]);
    return out;
  }
  const rec = headers as Record<string, Value>;
  for (const key of Object.keys(rec)) out.push([key, rec[key]]);
  return out;
}

/**
 * The headers without those `drop` names (it gets lower-cased names), plus `extra`, as a flat
 * [name, value, ...] list (which keeps repeated names).
 */
export function rewriteHeaders(
  headers: LibHeaders | undefined,
  drop: (name: string) => boolean,
  extra: [string, string][] = [],
): string[] {
  const out: string[] = [];
  for (const [name, value] of entries(headers)) {
    if (value === undefined || drop(String(name).toLowerCase())) continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, String(value));
  }
  for (const [name, value] of extra) out.push(name, value);
  return out;
}

/** Every value of the header `name` (lower case) in `headers`, in order. */
export function headerValues(headers: LibHeaders | undefined, name: string): string[] {
  const out: string[] = [];
  for (const [key, value] of entries(headers)) {
    if (value === undefined || String(key).toLowerCase() !== name) continue;
    if (Array.isArray(value)) for (const v of value) out.push(v);
    else out.push(String(value));
  }
  return out;
}
