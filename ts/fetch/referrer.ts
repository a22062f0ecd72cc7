// The Referer fetch sends: the W3C Referrer Policy's "determine request's referrer", run for each
// hop of a fetch as the Fetch standard's main fetch does, and the policy a redirect response's
// Referrer-Policy header sets for the hops after it.

const POLICIES: ReadonlySet<string> = new Set([
  'no-referrer',
  'no-referrer-when-downgrade',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
  'unsafe-url',
]);

/** The policy of a request that names none (a new policy container's). */
export const DEFAULT_REFERRER_POLICY = 'strict-origin-when-cross-origin';

// The loopback ranges a URL over plain http can still be trusted on (Secure Contexts §3.1).
const LOOPBACK_V4 = /^127\.(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){2}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;
const LOOPBACK_V6 = /^\[(?:(?:0{1,4}:){7}|(?:0{1,4}:){1,6}:|::)0{0,3}1\]$/;

/** Whether an http(s) URL is "potentially trustworthy" (Secure Contexts): https, or loopback. */
export function isPotentiallyTrustworthy(url: URL): boolean {
  const { protocol, hostname } = url;
  if (protocol === 'https:' || protocol === 'wss:') return true;
  return (
    LOOPBACK_V4.test(hostname) ||
    LOOPBACK_V6.test(hostname) ||
    hostname === 'localhost' ||
    hostname === 'localhost.' ||
    hostname.endsWith('.localhost') ||
    hostname.endsWith('.localhost.')
  );
}

/** The policy a Referrer-Policy header value names: its last known token, or '' for none. */
export function parseReferrerPolicy(header: string | null): string {
  if (header === null) return '';
  const tokens = header.split(',');
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i]!.trim();
    if (POLICIES.has(token)) return token;
  }
  return '';
}

/** A URL stripped for use as a referrer: no credentials or fragment, and with `originOnly` no path or query. */
function strip(url: URL, originOnly: boolean): URL | null {
  if (url.protocol === 'about:' || url.protocol === 'blob:' || url.protocol === 'data:') return null;
  const out = new URL(url.href);
  out.username = '';
  out.password = '';
  out.hash = '';
  if (originOnly) {
    out.pathname = '';
    out.search = '';
  }
  return out;
}

/**
 * The referrer to send to `current` (null: none), from `source` (the request's referrer as the
 * previous hop left it) under `policy`.
 */
export function determineReferrer(source: URL, policy: string, current: URL): URL | null {
  let full = strip(source, false);
  const origin = strip(source, true);
  if (full === null || origin === null) return null;
  // Long URLs leak too much and some servers refuse them: send only the origin.
  if (full.href.length > 4096) full = origin;
  const sameOrigin = full.origin === current.origin;
  const downgrade = isPotentiallyTrustworthy(full) && !isPotentiallyTrustworthy(current);
  switch (policy) {
    case 'no-referrer':
      return null;
    case 'origin':
      return origin;
    case 'unsafe-url':
      return full;
    case 'strict-origin':
      return downgrade ? null : origin;
    case 'same-origin':
      return sameOrigin ? full : null;
    case 'origin-when-cross-origin':
      return sameOrigin ? full : origin;
    case 'no-referrer-when-downgrade':
      return downgrade ? null : full;
    default: // strict-origin-when-cross-origin
      return sameOrigin ? full : downgrade ? null : origin;
  }
}
