// The jar's persisted form (toJSON / CookieJar.fromJSON): a version and the cookie records, with
// times as ms since the epoch. Input is checked field by field: a file edited by hand or written
// by something else gets an InvalidArgumentError naming what is wrong, not a half-loaded jar.
import { InvalidArgumentError } from '../core/errors.js';
import { isIP } from 'node:net';
import { hasCtlExceptHtab } from '../cookies/parse-set-cookie.js';
import { siteOf } from './public-suffix.js';
import type { SameSite, StoredCookie } from './stored-cookie.js';

/** A stored cookie as persisted: `site` is left out (it follows from the domain). */
export type CookieJarJSONCookie = Omit<StoredCookie, 'site'>;

export interface CookieJarJSON {
  version: 1;
  cookies: CookieJarJSONCookie[];
}

const SAME_SITE = new Set(['Strict', 'Lax', 'None']);

function fail(what: string): never {
  throw new InvalidArgumentError(`CookieJar.fromJSON: ${what}`);
}

function field<T>(record: Record<string, unknown>, key: string, i: number, ok: (v: unknown) => boolean): T {
  const v = record[key];
  if (!ok(v)) fail(`cookies[${i}].${key} is not valid`);
  return v as T;
}

// What a parsed Set-Cookie can hold: no control characters and no ';' (it ends the pair), so a
// loaded cookie cannot add a pair of its own to the cookie header.
const isString = (v: unknown): boolean => typeof v === 'string' && !v.includes(';') && !hasCtlExceptHtab(v);
const isName = (v: unknown): boolean => isString(v) && !(v as string).includes('=');
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const isTime = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);

function hostIsIp(domain: string): boolean {
  return isIP(domain.startsWith('[') ? domain.slice(1, -1) : domain) !== 0;
}

function readCookie(raw: unknown, i: number): StoredCookie {
  if (typeof raw !== 'object' || raw === null) fail(`cookies[${i}] is not an object`);
  const r = raw as Record<string, unknown>;
  const domain = field<string>(r, 'domain', i, (v) => isString(v) && v !== '' && v === (v as string).toLowerCase());
  const cookie: StoredCookie = {
    name: field<string>(r, 'name', i, isName),
    value: field<string>(r, 'value', i, isString),
    domain,
    path: field<string>(r, 'path', i, (v) => isString(v) && (v as string).startsWith('/')),
    expires: field<number | null>(r, 'expires', i, (v) => v === null || isTime(v)),
    secure: field<boolean>(r, 'secure', i, isBoolean),
    httpOnly: field<boolean>(r, 'httpOnly', i, isBoolean),
    hostOnly: field<boolean>(r, 'hostOnly', i, isBoolean),
    site: siteOf(domain, hostIsIp(domain)),
    creation: field<number>(r, 'creation', i, isTime),
    lastAccess: field<number>(r, 'lastAccess', i, isTime),
  };
  const sameSite = field<SameSite | undefined>(r, 'sameSite', i, (v) => v === undefined || SAME_SITE.has(v as string));
  if (sameSite !== undefined) cookie.sameSite = sameSite;
  return cookie;
}

/** The cookie records in `json` (an object or its JSON text). */
export function cookiesFromJSON(json: unknown): StoredCookie[] {
  let data = json;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch (err) {
      fail(`not JSON (${(err as Error).message})`);
    }
  }
  if (typeof data !== 'object' || data === null) fail('expected an object');
  const { version, cookies } = data as { version?: unknown; cookies?: unknown };
  if (version !== 1) fail(`unknown version ${String(version)}`);
  if (!Array.isArray(cookies)) fail('cookies must be an array');
  return cookies.map(readCookie);
}

export function cookiesToJSON(cookies: StoredCookie[]): CookieJarJSON {
  return { version: 1, cookies: cookies.map(({ site: _site, ...rest }) => rest) };
}
