// A Cookie as one Set-Cookie field value (RFC 6265 §4.1.1), refusing anything that would not
// survive as one: a name or value that could end the pair early, a path that could start another
// attribute, a domain that is not a host name.
import { InvalidArgumentError } from '../core/errors.js';
import type { Cookie } from './cookie.js';

/** token (RFC 2616): visible ASCII except the separators. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]*$/;
/** cookie-octet: visible ASCII except DQUOTE, comma, semicolon and backslash. */
const COOKIE_OCTETS = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
/** path-value: any CHAR except CTLs and ';'. */
const PATH_VALUE = /^[\x20-\x3a\x3c-\x7e]*$/;
/** A host-name label (RFC 1034 §3.5): letters, digits and inner hyphens, 1–63 of them. */
const LABEL = /^[0-9A-Za-z](?:[0-9A-Za-z-]{0,61}[0-9A-Za-z])?$/;
// The time value range of a Date (ECMA-262): beyond it there is no date to write.
const MAX_TIME_VALUE = 8.64e15;

function fail(what: string): never {
  throw new InvalidArgumentError(`Invalid cookie ${what}`);
}

function validateCookieName(name: string): void {
  if (!TOKEN.test(name)) fail('name');
}

function validateCookieValue(value: string): void {
  // Optionally wrapped in one pair of double quotes.
  const inner = value.startsWith('"') ? (value.length > 1 && value.endsWith('"') ? value.slice(1, -1) : fail('value')) : value;
  if (!COOKIE_OCTETS.test(inner)) fail('value');
}

function validateCookiePath(path: string): void {
  if (!PATH_VALUE.test(path)) fail('path');
}

/** RFC 1034's preferred name syntax; a single space is its name for the root. */
function validateCookieDomain(domain: string): void {
  if (domain === ' ') return;
  if (domain.length > 255 || !domain.split('.').every((label) => LABEL.test(label))) fail('domain');
}

function expiresText(expires: Date | number): string | null {
  const ms = expires instanceof Date ? expires.getTime() : expires;
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_TIME_VALUE) return null;
  // toUTCString writes RFC 7231's IMF-fixdate.
  return new Date(ms).toUTCString();
}

/** The Set-Cookie value for a cookie, or null for a cookie with no name (nothing to set). */
export function serializeCookie(input: Cookie): string | null {
  if (input.name.length === 0) return null;
  validateCookieName(input.name);
  validateCookieValue(input.value);
  const cookie = { ...input };
  // Cookie name prefixes (RFC 6265bis §4.1.3): the attributes the prefix promises.
  if (cookie.name.startsWith('__Secure-')) cookie.secure = true;
  if (cookie.name.startsWith('__Host-')) {
    cookie.secure = true;
    cookie.domain = undefined;
    cookie.path = '/';
  }
  const out = [`${cookie.name}=${cookie.value}`];
  if (cookie.secure) out.push('Secure');
  if (cookie.httpOnly) out.push('HttpOnly');
  if (typeof cookie.maxAge === 'number') {
    if (cookie.maxAge < 0) fail('max-age');
    out.push(`Max-Age=${cookie.maxAge}`);
  }
  if (cookie.domain) {
    validateCookieDomain(cookie.domain);
    out.push(`Domain=${cookie.domain}`);
  }
  if (cookie.path) {
    validateCookiePath(cookie.path);
    out.push(`Path=${cookie.path}`);
  }
  if (cookie.expires != null) {
    const text = expiresText(cookie.expires);
    if (text !== null) out.push(`Expires=${text}`);
  }
  if (cookie.sameSite) out.push(`SameSite=${cookie.sameSite}`);
  for (const part of cookie.unparsed ?? []) {
    const at = part.indexOf('=');
    if (at === -1) throw new InvalidArgumentError('Invalid unparsed');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1);
    validateCookieName(key);
    validateCookieValue(value);
    out.push(`${key}=${value}`);
  }
  return out.join('; ');
}
