// The headers fetch sends on each hop: the caller's, plus those the Fetch standard's fetching and
// HTTP-network-or-cache fetch add, with the values undici's fetch gives them. Worked out again for
// every hop, as there: Accept-Encoding follows the scheme, Sec-Fetch-Mode the host, Referer the policy.
import { isPotentiallyTrustworthy } from './referrer.js';

/** One hop's facts the added headers depend on. */
export interface Hop {
  url: URL;
  method: string;
  mode: RequestMode;
  cache: RequestCache;
  /** The request has a body (any length). */
  hasBody: boolean;
  referrer: URL | null;
  referrerPolicy: string;
  /** The origin requests come from (the global origin's); null: none, so no Origin header. */
  requestOrigin: string | null;
  /** A cors-mode request has left its first URL's origin (the Fetch standard's "cors" tainting). */
  crossOrigin: boolean;
}

// What undici's fetch sends (rather than Node's bundled copy's 'node').
const USER_AGENT = 'undici';
// Over https the codings a TLS peer can be trusted to compress safely too; fetch decodes them all.
const ACCEPT_ENCODING_HTTPS = 'br, gzip, deflate, zstd';
const ACCEPT_ENCODING_HTTP = 'gzip, deflate';
// Headers that make a "default" cache mode behave as "no-store" (Fetch, HTTP-network-or-cache fetch).
const CONDITIONAL = ['if-modified-since', 'if-none-match', 'if-unmodified-since', 'if-match', 'if-range'];

/** The Origin header of a hop (Fetch: append a request `Origin` header); null for none. */
function originHeader(hop: Hop, origin: string): string | null {
  if (hop.crossOrigin) return origin;
  if (hop.method === 'GET' || hop.method === 'HEAD') return null;
  switch (hop.referrerPolicy) {
    case 'no-referrer':
      return 'null';
    case 'no-referrer-when-downgrade':
    case 'strict-origin':
    case 'strict-origin-when-cross-origin':
      return origin.startsWith('https:') && hop.url.protocol !== 'https:' ? 'null' : origin;
    case 'same-origin':
      return origin === hop.url.origin ? origin : 'null';
    default:
      return origin;
  }
}

const byName = (a: [string, string], b: [string, string]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** The wire headers of a GET / HEAD without caller headers or referrer, by scheme and trust. */
const plain = new Map<string, string[]>();

/**
 * The headers to send, flat ([name, value, …]) and sorted by name as Headers lists them. `caller`
 * is the request's header list (null: none set).
 */
export function hopHeaders(caller: Headers | null, hop: Hop): string[] {
  const https = hop.url.protocol === 'https:';
  const trusted = isPotentiallyTrustworthy(hop.url);
  const simple = caller === null && hop.referrer === null && hop.requestOrigin === null && hop.mode === 'cors' && hop.cache === 'default';
  const key = simple && !hop.hasBody && (hop.method === 'GET' || hop.method === 'HEAD') ? `${https}${trusted}` : '';
  if (key !== '') {
    const cached = plain.get(key);
    // A copy: the list is the request's own, and a dispatcher may add to it (undici code does).
    if (cached !== undefined) return cached.slice();
  }

  // The caller's names, gathered while copying: Headers.has validates its argument on every call.
  const names = new Set<string>();
  const has = (name: string): boolean => names.has(name);
  const out: [string, string][] = [];
  let acceptEncoding = -1;
  if (caller !== null) {
    for (const pair of caller) {
      const name = pair[0];
      names.add(name);
      // Host comes from the URL; Sec-Fetch-Mode is always the request's mode.
      if (name === 'host' || (trusted && name === 'sec-fetch-mode')) continue;
      if (name === 'accept-encoding') acceptEncoding = out.length;
      out.push(pair);
    }
  }
  if (!has('accept')) out.push(['accept', '*/*']);
  if (!has('accept-language')) out.push(['accept-language', '*']);
  // A POST or PUT without a body says so; a body's own length the dispatcher sends.
  if (!hop.hasBody && (hop.method === 'POST' || hop.method === 'PUT') && !has('content-length')) out.push(['content-length', '0']);
  if (hop.referrer !== null && !has('referer')) out.push(['referer', hop.referrer.href]);
  if (hop.requestOrigin !== null && !has('origin')) {
    const origin = originHeader(hop, hop.requestOrigin);
    if (origin !== null) out.push(['origin', origin]);
  }
  if (trusted) out.push(['sec-fetch-mode', hop.mode]);
  if (!has('user-agent')) out.push(['user-agent', USER_AGENT]);

  let cache = hop.cache;
  if (cache === 'default' && CONDITIONAL.some(has)) cache = 'no-store';
  if (cache === 'no-cache' && !has('cache-control')) out.push(['cache-control', 'max-age=0']);
  if (cache === 'no-store' || cache === 'reload') {
    if (!has('pragma')) out.push(['pragma', 'no-cache']);
    if (!has('cache-control')) out.push(['cache-control', 'no-cache']);
  }
  // A range of encoded bytes is useless to a client that decodes: ask for the identity coding.
  if (has('range')) {
    if (acceptEncoding >= 0) out[acceptEncoding] = ['accept-encoding', `${out[acceptEncoding]![1]}, identity`];
    else out.push(['accept-encoding', 'identity']);
  } else if (acceptEncoding < 0) {
    out.push(['accept-encoding', https ? ACCEPT_ENCODING_HTTPS : ACCEPT_ENCODING_HTTP]);
  }

  const flat = out.sort(byName).flat();
  if (key !== '') plain.set(key, flat.slice());
  return flat;
}
