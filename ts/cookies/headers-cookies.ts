// Cookie helpers on a WHATWG Headers (undici's getCookies, getSetCookies, setCookie,
// deleteCookie, parseCookie): read the Cookie request header, read and write Set-Cookie
// response headers.
import { InvalidArgumentError } from '../core/errors.js';
import type { Headers } from '../fetch/whatwg-classes.js';
import type { Cookie } from './cookie.js';
import { parseSetCookie } from './parse-set-cookie.js';
import { serializeCookie } from './serialize-cookie.js';

export type { Cookie } from './cookie.js';

function requireArgs(count: number, min: number, name: string): void {
  if (count < min) {
    throw new TypeError(`${name}: ${min} argument${min === 1 ? '' : 's'} required, but${count ? ' only' : ''} ${count} found.`);
  }
}

/** The WebIDL brand check: only a real Headers (Node's, which ferro's is) will do. */
function checkHeaders(headers: unknown): asserts headers is Headers {
  if (!(headers instanceof globalThis.Headers)) {
    const err = new TypeError('Illegal invocation') as TypeError & { code: string };
    err.code = 'ERR_INVALID_THIS';
    throw err;
  }
}

function optionalString(value: unknown, key: string): string | undefined {
  if (value == null) return undefined;
  if (typeof value === 'symbol') throw new InvalidArgumentError(`cookie ${key} cannot be a symbol`);
  return String(value);
}

function requiredString(value: unknown, key: string): string {
  const text = optionalString(value, key);
  if (text === undefined) throw new InvalidArgumentError(`cookie ${key} must be a string`);
  return text;
}

function optionalBoolean(value: unknown): boolean | undefined {
  return value == null ? undefined : Boolean(value);
}

function optionalInteger(value: unknown, key: string): number | undefined {
  if (value == null) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`cookie ${key} must be a finite number`);
  return Math.trunc(n);
}

/** The cookie dictionary as the helpers use it: typed, every field checked, nothing else kept. */
function toCookie(input: unknown): Cookie {
  if (typeof input !== 'object' || input === null) throw new InvalidArgumentError('cookie must be an object');
  const raw = input as Record<string, unknown>;
  const cookie: Cookie = { name: requiredString(raw.name, 'name'), value: requiredString(raw.value, 'value') };
  const { expires, sameSite, unparsed } = raw;
  if (expires != null) cookie.expires = typeof expires === 'number' ? Math.trunc(expires) : new Date(expires as string | Date);
  const maxAge = optionalInteger(raw.maxAge, 'maxAge');
  if (maxAge !== undefined) cookie.maxAge = maxAge;
  const domain = optionalString(raw.domain, 'domain');
  if (domain !== undefined) cookie.domain = domain;
  const path = optionalString(raw.path, 'path');
  if (path !== undefined) cookie.path = path;
  const secure = optionalBoolean(raw.secure);
  if (secure !== undefined) cookie.secure = secure;
  const httpOnly = optionalBoolean(raw.httpOnly);
  if (httpOnly !== undefined) cookie.httpOnly = httpOnly;
  if (sameSite !== undefined) {
    if (sameSite !== 'Strict' && sameSite !== 'Lax' && sameSite !== 'None') {
      throw new InvalidArgumentError(`cookie sameSite must be one of Strict, Lax, None; got ${String(sameSite)}`);
    }
    cookie.sameSite = sameSite;
  }
  if (unparsed != null) {
    if (typeof unparsed !== 'object' || typeof (unparsed as Iterable<unknown>)[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError('cookie unparsed must be an iterable of strings');
    }
    cookie.unparsed = Array.from(unparsed as Iterable<unknown>, (part) => requiredString(part, 'unparsed entry'));
  }
  return cookie;
}

/** The cookies a Cookie request header carries, by name (a later one of the same name wins). */
export function getCookies(headers: Headers): Record<string, string> {
  requireArgs(arguments.length, 1, 'getCookies');
  checkHeaders(headers);
  // No prototype: a cookie named `__proto__` is a cookie like any other.
  const out = Object.create(null) as Record<string, string>;
  const header = headers.get('cookie');
  if (!header) return out;
  for (const piece of header.split(';')) {
    const at = piece.indexOf('=');
    // A piece without '=' is a name with an empty value.
    if (at === -1) out[piece.trim()] = '';
    else out[piece.slice(0, at).trim()] = piece.slice(at + 1);
  }
  return out;
}

/** Every Set-Cookie response header, parsed (null for one a user agent would ignore). */
export function getSetCookies(headers: Headers): Cookie[] {
  requireArgs(arguments.length, 1, 'getSetCookies');
  checkHeaders(headers);
  return headers.getSetCookie().map((value) => parseSetCookie(value)) as Cookie[];
}

/** One Set-Cookie value parsed as a Cookie; null when a user agent would ignore it. */
export function parseCookie(cookie: string): Cookie | null {
  if (typeof cookie === 'symbol') throw new TypeError('parseCookie: cookie cannot be a symbol');
  return parseSetCookie(String(cookie));
}

/** Appends a Set-Cookie header for the cookie (none for a cookie with an empty name). */
export function setCookie(headers: Headers, cookie: Cookie): void {
  requireArgs(arguments.length, 2, 'setCookie');
  checkHeaders(headers);
  const value = serializeCookie(toCookie(cookie));
  if (value !== null) headers.append('set-cookie', value);
}

/** Appends a Set-Cookie header that expires the named cookie at once. */
export function deleteCookie(headers: Headers, name: string, attributes?: { path?: string; domain?: string }): void {
  checkHeaders(headers);
  requireArgs(arguments.length, 2, 'deleteCookie');
  const attrs = (attributes ?? {}) as { path?: unknown; domain?: unknown };
  const cookie: Cookie = { name: requiredString(name, 'name'), value: '', expires: new Date(0) };
  const path = optionalString(attrs.path, 'path');
  if (path !== undefined) cookie.path = path;
  const domain = optionalString(attrs.domain, 'domain');
  if (domain !== undefined) cookie.domain = domain;
  setCookie(headers, cookie);
}
