// Cache-Control parsing (RFC 9111 §5.2; RFC 5861 for stale-while-revalidate / stale-if-error).
import type { CacheControlDirectives } from './cache-store.js';

type HeaderValue = string | string[] | undefined;

// Directives whose argument is delta-seconds.
const SECONDS = new Set(['max-age', 's-maxage', 'max-stale', 'min-fresh', 'stale-while-revalidate', 'stale-if-error']);
// Directives that may carry a quoted list of field names.
const FIELD_LISTS = new Set(['private', 'no-cache']);
const FLAGS = new Set([
  'public', 'no-store', 'must-revalidate', 'proxy-revalidate', 'immutable', 'no-transform', 'must-understand',
  'only-if-cached',
]);
// RFC 9111 §1.2.2: delta-seconds too large to represent are taken as 2^31.
const MAX_SECONDS = 2 ** 31;

/** Splits on commas that are not inside a quoted string. */
function splitList(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && quoted && i + 1 < value.length) {
      current += c + value[++i]!;
      continue;
    } else if (c === ',' && !quoted) {
      parts.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return value;
}

function parseSeconds(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const v = unquote(raw);
  if (!/^\d+$/.test(v)) return null;
  return Math.min(Number(v), MAX_SECONDS);
}

/** Joins repeated header lines into one list value. */
export function headerList(value: HeaderValue): string {
  if (value === undefined) return '';
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Parses a Cache-Control value. Unknown directives are ignored. An invalid or conflicting
 * max-age / s-maxage counts as 0 (RFC 9111 §4.2.1: such a response is treated as stale); other
 * invalid durations are dropped, except a bare `max-stale`, which means any staleness.
 */
export function parseCacheControl(value: HeaderValue): CacheControlDirectives {
  const out: CacheControlDirectives = {};
  const record = out as Record<string, unknown>;
  for (const part of splitList(headerList(value))) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    const arg = eq === -1 ? undefined : part.slice(eq + 1).trim();
    if (SECONDS.has(name)) {
      const seconds = parseSeconds(arg);
      if (seconds === null) {
        if (name === 'max-age' || name === 's-maxage') record[name] = 0;
        else if (name === 'max-stale' && arg === undefined) record[name] = Infinity;
        continue;
      }
      const prior = record[name];
      record[name] = prior !== undefined && prior !== seconds ? 0 : seconds;
    } else if (FIELD_LISTS.has(name)) {
      if (arg === undefined) {
        record[name] = true;
        continue;
      }
      const fields = unquote(arg)
        .split(',')
        .map((f) => f.trim().toLowerCase())
        .filter((f) => f.length > 0);
      const prior = record[name];
      if (prior === true) continue;
      record[name] = fields.length === 0 ? true : [...((prior as string[] | undefined) ?? []), ...fields];
    } else if (FLAGS.has(name)) {
      record[name] = true;
    }
  }
  return out;
}
