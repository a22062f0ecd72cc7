// Which requests are "the same" for snapshots: the matched parts of a stored request (method, URL,
// chosen headers, body) under the agent's matching options, and the hash that keys them. The hash
// is taken over canonical JSON of those parts, so no value can run into the next field and forge
// another request's key, as joining strings with separators would allow.
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../core/errors.js';
import type { SnapshotRequest } from './snapshot-format.js';
import { SECRET_HEADERS } from './snapshot-headers.js';

export interface SnapshotMatchOptions {
  /** When set, only these headers take part in matching. */
  matchHeaders?: readonly string[];
  ignoreHeaders?: readonly string[];
  /** Lower-case names never stored, so never matched. */
  excludeHeaders: ReadonlySet<string>;
  /** Secret headers are stored masked, so they cannot take part in matching either. */
  redactSecrets: boolean;
  matchBody: boolean;
  normalizeBody?: (body: string | Buffer | null | undefined) => string;
  matchQuery: boolean;
  normalizeQuery?: (query: URLSearchParams) => string;
  caseSensitive: boolean;
}

/** The parts of a request that decide which snapshot answers it. */
export interface SnapshotKey {
  method: string;
  origin: string;
  pathname: string;
  /** The query as matched; null when queries are not matched. */
  query: string | null;
  /** Matched headers sorted by name, each with all its values. */
  headers: [string, string[]][];
  /** The body as matched: text, or base64 for bytes that are not UTF-8; null when not matched or absent. */
  body: { text: string } | { base64: string } | null;
}

/** JSON with object keys sorted at every level: one text per value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The stored body as normalizeBody receives it: text, bytes when not UTF-8, undefined when absent. */
function storedBodyValue(request: SnapshotRequest): string | Buffer | undefined {
  if (request.body === undefined) return undefined;
  return request.bodyEncoding === 'base64' ? Buffer.from(request.body, 'base64') : request.body;
}

function keyHeaders(request: SnapshotRequest, m: SnapshotMatchOptions): [string, string[]][] {
  const fold = (name: string): string => (m.caseSensitive ? name : name.toLowerCase());
  const only = m.matchHeaders === undefined ? undefined : new Set(m.matchHeaders.map(fold));
  const ignored = new Set((m.ignoreHeaders ?? []).map(fold));
  const merged = new Map<string, string[]>();
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (m.excludeHeaders.has(lower) || (m.redactSecrets && SECRET_HEADERS.has(lower))) continue;
    const key = fold(name);
    if (ignored.has(key) || (only !== undefined && !only.has(key))) continue;
    const values = Array.isArray(value) ? value : [value];
    merged.set(key, [...(merged.get(key) ?? []), ...values]);
  }
  return [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function keyBody(request: SnapshotRequest, m: SnapshotMatchOptions): SnapshotKey['body'] {
  if (!m.matchBody) return null;
  if (m.normalizeBody !== undefined) {
    const normalized = m.normalizeBody(storedBodyValue(request));
    if (typeof normalized !== 'string') {
      throw new InvalidArgumentError(`normalizeBody must return a string, got ${typeof normalized}`);
    }
    return { text: normalized };
  }
  if (request.body === undefined) return null;
  return request.bodyEncoding === 'base64' ? { base64: request.body } : { text: request.body };
}

function keyQuery(url: URL, m: SnapshotMatchOptions): string | null {
  if (!m.matchQuery) return null;
  const params = new URLSearchParams(url.search);
  if (m.normalizeQuery !== undefined) {
    const normalized = m.normalizeQuery(params);
    if (typeof normalized !== 'string') {
      throw new InvalidArgumentError(`normalizeQuery must return a string, got ${typeof normalized}`);
    }
    return normalized;
  }
  // Parameter order carries no meaning to a server, so it does not split snapshots.
  params.sort();
  return params.toString();
}

export function snapshotKey(request: SnapshotRequest, m: SnapshotMatchOptions): SnapshotKey {
  const url = new URL(request.url);
  return {
    method: request.method,
    origin: url.origin,
    pathname: url.pathname,
    query: keyQuery(url, m),
    headers: keyHeaders(request, m),
    body: keyBody(request, m),
  };
}

/** sha256 (hex) of the key's canonical JSON. */
export function snapshotHash(key: SnapshotKey): string {
  return createHash('sha256').update(canonicalJson(key)).digest('hex');
}
