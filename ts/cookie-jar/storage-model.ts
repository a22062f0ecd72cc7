// RFC 6265bis §5.7 (the storage model), the part that needs only the Set-Cookie value and the URL
// it came with: the cookie record to store, or null when the value is to be ignored. What needs
// the jar's other cookies (replacement, "leave secure cookies alone", eviction) is the jar's.
import { domainToASCII } from 'node:url';
import { parseSetCookie } from '../cookies/parse-set-cookie.js';
import type { CookieUrl } from './cookie-url.js';
import { defaultPath, domainMatches } from './cookie-url.js';
import { isPublicSuffix } from './public-suffix.js';
import type { StoredCookie } from './stored-cookie.js';

// §5.5 / §5.6: no expiry further than 400 days ahead.
const MAX_LIFETIME_MS = 400 * 24 * 3600 * 1000;

/** Name prefixes (§4.1.3), compared case-insensitively as the current draft asks. */
function hasPrefix(text: string, prefix: string): boolean {
  return text.length >= prefix.length && text.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase();
}

/** When the cookie stops being sent: null for a session cookie, -Infinity for one already expired. */
function expiryOf(maxAge: number | undefined, expires: Date | number | undefined, now: number): number | null {
  // Max-Age wins over Expires (§5.7 step 3).
  if (maxAge !== undefined) return maxAge <= 0 ? -Infinity : now + Math.min(maxAge * 1000, MAX_LIFETIME_MS);
  if (expires === undefined) return null;
  const at = expires instanceof Date ? expires.getTime() : expires;
  return Math.min(at, now + MAX_LIFETIME_MS);
}

/**
 * The cookie a Set-Cookie value received from `url` asks to store, or null when the draft says to
 * ignore it. A cookie whose `expires` is in the past is returned: storing it deletes its namesake.
 */
export function cookieFromSetCookie(header: string, url: CookieUrl, now: number): StoredCookie | null {
  const parsed = parseSetCookie(header, defaultPath(url.path));
  if (parsed === null) return null;
  const { name, value } = parsed;
  if (name === '' && value === '') return null;
  // A nameless cookie must not look like a prefixed one to a server that splits on '='.
  if (name === '' && (hasPrefix(value, '__Secure-') || hasPrefix(value, '__Host-'))) return null;

  let hostOnly = true;
  let domain = url.host;
  if (parsed.domain) {
    const attr = domainToASCII(parsed.domain);
    if (attr === '' && !url.isIp) return null;
    if (url.isIp || isPublicSuffix(attr)) {
      // An IP address matches only itself; a public suffix is accepted only from that very host.
      // Either way the cookie stays host-only.
      if ((url.isIp ? parsed.domain : attr) !== url.host) return null;
    } else {
      if (!domainMatches(url.host, attr, false)) return null;
      hostOnly = false;
      domain = attr;
    }
  }

  const secure = parsed.secure === true;
  // Only a secure channel may set a Secure cookie (§5.7 step 11).
  if (secure && !url.secure) return null;
  const sameSite = parsed.sameSite;
  // SameSite=None is for Secure cookies only (§5.7 step 17).
  if (sameSite === 'None' && !secure) return null;
  const path = parsed.path ?? defaultPath(url.path);
  if (hasPrefix(name, '__Secure-') && !secure) return null;
  // __Host-: Secure, from a host (no Domain attribute), for the whole host (Path=/ given).
  if (hasPrefix(name, '__Host-') && (!secure || !hostOnly || parsed.path !== '/')) return null;

  const stored: StoredCookie = {
    name,
    value,
    domain,
    path,
    expires: expiryOf(parsed.maxAge, parsed.expires, now),
    secure,
    httpOnly: parsed.httpOnly === true,
    hostOnly,
    site: url.registrable,
    creation: now,
    lastAccess: now,
  };
  if (sameSite !== undefined) stored.sameSite = sameSite;
  return stored;
}
