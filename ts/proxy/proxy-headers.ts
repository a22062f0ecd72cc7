// Request headers on their way through a proxy agent: `proxy-authorization` belongs to the agent's
// options (so credentials meant for the proxy can never reach an origin), and `host` names the
// origin even when the request itself goes to the proxy.
import { InvalidArgumentError } from '../core/errors.js';
import { hasSafeIterator } from '../core/headers.js';
import type { LibHeaders } from '../core/types.js';

type Value = string | string[] | number | undefined;

function pairs(headers: LibHeaders | undefined): [string, Value][] {
  if (headers == null) return [];
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) throw new InvalidArgumentError('headers array must be even');
    const out: [string, Value][] = [];
    for (let i = 0; i < headers.length; i += 2) out.push([String(headers[i]), headers[i + 1]]);
    return out;
  }
  if (typeof headers !== 'object') throw new InvalidArgumentError('headers must be an object or an array');
  // Map, Headers and other iterables too: their entries are invisible to `for...in`.
  if (hasSafeIterator(headers)) {
    const out: [string, Value][] = [];
    for (const pair of headers as Iterable<unknown>) {
      if (!Array.isArray(pair) || pair.length !== 2) throw new InvalidArgumentError('headers must be in key-value pair format');
      out.push([String(pair[0]), pair[1] as Value]);
    }
    return out;
  }
  return Object.entries(headers as Record<string, Value>);
}

/**
 * `headers` as a flat [name, value, ...] list: `extra` first (minus names the request sets itself),
 * then the request's own, then `host` unless given. Throws on a `proxy-authorization` header.
 */
export function proxiedHeaders(headers: LibHeaders | undefined, host: string, extra: Record<string, string> = {}): LibHeaders {
  const own = pairs(headers);
  const names = new Set<string>();
  for (const [name] of own) {
    const lower = name.toLowerCase();
    if (lower === 'proxy-authorization') {
      throw new InvalidArgumentError('Proxy-Authorization should be sent in ProxyAgent constructor');
    }
    names.add(lower);
  }
  const flat: unknown[] = [];
  for (const [name, value] of Object.entries(extra)) if (!names.has(name.toLowerCase())) flat.push(name, value);
  for (const [name, value] of own) flat.push(name, value);
  if (!names.has('host')) flat.push('host', host);
  return flat as string[];
}
