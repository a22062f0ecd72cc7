// Parsing one Set-Cookie field value into a Cookie, as RFC 6265bis §5.4 (the user agent's
// algorithm) lays it out. Values are never percent-decoded: a cookie value is opaque bytes.
import type { Cookie } from './cookie.js';

// Cookie Store API limits, which undici also applies.
const MAX_NAME_VALUE_PAIR = 4096;
const MAX_ATTRIBUTE_VALUE = 1024;

/** CTLs other than HTAB: a string holding one is ignored entirely (§5.4 step 1). */
export function hasCtlExceptHtab(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x08 || (c >= 0x0a && c <= 0x1f) || c === 0x7f) return true;
  }
  return false;
}

/** Splits at the first `sep`: [before, after], after null when there is none. */
function splitOnce(text: string, sep: string): [string, string | null] {
  const at = text.indexOf(sep);
  return at === -1 ? [text, null] : [text.slice(0, at), text.slice(at + 1)];
}

const SAME_SITE: Record<string, Cookie['sameSite']> = { strict: 'Strict', lax: 'Lax', none: 'None' };

/** A Max-Age value: an optional '-' then digits only, else ignored (§5.4.2). */
function parseMaxAge(value: string): number | undefined {
  return /^-?\d+$/.test(value) ? Number(value) : undefined;
}

function applyAttribute(cookie: Cookie, name: string, value: string, defaultPath: string): void {
  switch (name.toLowerCase()) {
    case 'expires': {
      const time = new Date(value);
      if (!Number.isNaN(time.getTime())) cookie.expires = time;
      return;
    }
    case 'max-age': {
      const maxAge = parseMaxAge(value);
      if (maxAge !== undefined) cookie.maxAge = maxAge;
      return;
    }
    case 'domain':
      cookie.domain = (value.startsWith('.') ? value.slice(1) : value).toLowerCase();
      return;
    case 'path':
      // A relative path means the default path: the request URL's directory (the cookie jar
      // knows it), '/' without one.
      cookie.path = value.startsWith('/') ? value : defaultPath;
      return;
    case 'secure':
      cookie.secure = true;
      return;
    case 'httponly':
      cookie.httpOnly = true;
      return;
    case 'samesite': {
      const sameSite = SAME_SITE[value.toLowerCase()];
      if (sameSite !== undefined) cookie.sameSite = sameSite;
      return;
    }
    default:
      (cookie.unparsed ??= []).push(`${name}=${value}`);
  }
}

/**
 * One Set-Cookie value as a Cookie, or null when the value is to be ignored. `defaultPath` is what
 * a relative Path attribute becomes (an absent one leaves `path` unset).
 */
export function parseSetCookie(header: string, defaultPath = '/'): Cookie | null {
  if (hasCtlExceptHtab(header)) return null;
  const [pair, rest] = splitOnce(header, ';');
  const [first, second] = splitOnce(pair, '=');
  // No '=': the whole pair is the value and the name is empty.
  const name = second === null ? '' : first.trim();
  const value = (second ?? first).trim();
  if (name.length + value.length > MAX_NAME_VALUE_PAIR) return null;
  const cookie: Cookie = { name, value };
  if (rest === null) return cookie;
  for (const av of rest.split(';')) {
    const [rawName, rawValue] = splitOnce(av, '=');
    const attrValue = (rawValue ?? '').trim();
    if (attrValue.length > MAX_ATTRIBUTE_VALUE) continue;
    applyAttribute(cookie, rawName.trim(), attrValue, defaultPath);
  }
  return cookie;
}
