// CookieJar: RFC 6265bis storage (§5.7) and retrieval (§5.8) for a client that is not a browser.
// Every request is the application's own, so it is same-site: Strict, Lax and None cookies are all
// sent. Only a redirect chain that has left the first request's site is cross-site, as a browser
// would count it: Strict cookies are withheld there, and Lax (and unmarked) cookies go only with a
// safe method. HttpOnly cookies are sent (this is an HTTP API); Secure ones only over https / wss
// or to a loopback host.
import { InvalidArgumentError } from '../core/errors.js';
import { cookieUrl, domainMatches, pathMatches, type CookieUrl } from './cookie-url.js';
import { MemoryCookieStore, isCookieStore, type CookieStore } from './cookie-store.js';
import { cookiesFromJSON, cookiesToJSON, type CookieJarJSON } from './jar-json.js';
import { cookieFromSetCookie } from './storage-model.js';
import { cookiePair, publicView, sameIdentity, type CookieJarCookie, type StoredCookie } from './stored-cookie.js';

export interface CookieJarOptions {
  /** Where the cookies are kept. Default: a new MemoryCookieStore. */
  store?: CookieStore;
  /** Most cookies per registrable domain; the least recently used go first. Default 180. */
  maxCookiesPerDomain?: number;
  /** Most cookies in the jar; the least recently used go first. Default 3000. */
  maxCookies?: number;
}

/** The request a cookie header is built for, beyond its URL. */
export interface CookieRequestContext {
  /** The request is cross-site (a redirect chain left the site it started on). Default false. */
  crossSite?: boolean;
  /** The request method; with crossSite, Lax cookies go only with GET, HEAD, OPTIONS or TRACE. */
  method?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
const ACCESS_GRANULARITY_MS = 1000;

function limitOption(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(`${name} must be a positive integer`);
  }
  return value;
}

function stringArgument(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(`${name} must be a string`);
  return value;
}

/** §5.8.3 step 2: longer paths first, then earlier creation. */
function headerOrder(a: StoredCookie, b: StoredCookie): number {
  return b.path.length - a.path.length || a.creation - b.creation;
}

function isExpired(c: StoredCookie, now: number): boolean {
  return c.expires !== null && c.expires <= now;
}

/**
 * setCookie and getCookieString for a URL already read: the interceptor reads a request's URL
 * once for both. Not public API (so not methods).
 */
export let jarAccess: {
  store(jar: CookieJar, setCookie: string, url: CookieUrl): StoredCookie | null;
  header(jar: CookieJar, url: CookieUrl, context: CookieRequestContext): string;
};

export class CookieJar {
  readonly #store: CookieStore;
  readonly #maxPerDomain: number;
  readonly #max: number;

  constructor(options: CookieJarOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('CookieJar options must be an object');
    if (options.store !== undefined && !isCookieStore(options.store)) {
      throw new InvalidArgumentError('store must implement findBySite, all, count, put, remove and removeAll');
    }
    this.#store = options.store ?? new MemoryCookieStore();
    this.#maxPerDomain = limitOption(options.maxCookiesPerDomain, 'maxCookiesPerDomain', 180);
    this.#max = limitOption(options.maxCookies, 'maxCookies', 3000);
  }

  /** A jar holding the cookies of `toJSON()`'s output (an object or its JSON text). */
  static fromJSON(json: CookieJarJSON | string, options?: CookieJarOptions): CookieJar {
    const jar = new CookieJar(options);
    const now = Date.now();
    for (const cookie of cookiesFromJSON(json)) {
      if (isExpired(cookie, now)) continue;
      jar.#store.put(cookie);
      jar.#enforceCaps(cookie.site, jar.#store.findBySite(cookie.site).length, now);
    }
    return jar;
  }

  static {
    jarAccess = { store: (jar, setCookie, url) => jar.#storeFrom(setCookie, url), header: (jar, url, context) => jar.#headerFor(url, context) };
  }

  /**
   * Stores what one Set-Cookie field value received from `url` asks for. Returns the cookie
   * stored, or null when the value was ignored (malformed, a public-suffix Domain, a Secure
   * cookie over http, a broken name prefix, ...) or deleted a cookie (expired).
   */
  setCookie(setCookie: string, url: string | URL): CookieJarCookie | null {
    stringArgument(setCookie, 'setCookie');
    const stored = this.#storeFrom(setCookie, cookieUrl(url));
    return stored === null ? null : publicView(stored);
  }

  #storeFrom(setCookie: string, url: CookieUrl): StoredCookie | null {
    const now = Date.now();
    const cookie = cookieFromSetCookie(setCookie, url, now);
    if (cookie === null) return null;
    const siblings = this.#store.findBySite(cookie.site);
    // "Leave secure cookies alone" (§5.7 step 16): plain http cannot shadow a Secure cookie.
    if (!url.secure && siblings.some((old) => old.secure && old.name === cookie.name && overlaps(old, cookie))) return null;
    const old = siblings.find((c) => sameIdentity(c, cookie));
    if (old !== undefined) cookie.creation = old.creation;
    if (isExpired(cookie, now)) {
      if (old !== undefined) this.#store.remove(old);
      return null;
    }
    // put() replaces `old`; only a new cookie can take a cap past its limit.
    this.#store.put(cookie);
    if (old === undefined) this.#enforceCaps(cookie.site, siblings.length + 1, now);
    return cookie;
  }

  /** The cookies a request to `url` sends, in cookie-header order (synchronous). */
  getCookies(url: string | URL, context: CookieRequestContext = {}): CookieJarCookie[] {
    return this.#select(cookieUrl(url), context).map(publicView);
  }

  /** The cookie header value for a request to `url` ('' when there is none). */
  getCookieString(url: string | URL, context: CookieRequestContext = {}): string {
    return this.#headerFor(cookieUrl(url), context);
  }

  #headerFor(url: CookieUrl, context: CookieRequestContext): string {
    const cookies = this.#select(url, context);
    if (cookies.length === 0) return '';
    let out = cookiePair(cookies[0]!);
    for (let i = 1; i < cookies.length; i++) out += `; ${cookiePair(cookies[i]!)}`;
    return out;
  }

  /** Removes the cookies named `name` that a request to `url` would send (Secure ones too); returns how many. */
  deleteCookie(name: string, url: string | URL): number {
    stringArgument(name, 'name');
    const target = cookieUrl(url);
    let removed = 0;
    for (const c of this.#store.findBySite(target.registrable)) {
      if (c.name === name && this.#covers(c, target)) {
        this.#store.remove(c);
        removed++;
      }
    }
    return removed;
  }

  /** Empties the jar. */
  removeAll(): void {
    this.#store.removeAll();
  }

  /** Every unexpired cookie, session cookies included, for CookieJar.fromJSON. */
  toJSON(): CookieJarJSON {
    const now = Date.now();
    return cookiesToJSON(this.#store.all().filter((c) => !isExpired(c, now)));
  }

  #covers(c: StoredCookie, url: CookieUrl): boolean {
    const hostMatches = c.hostOnly ? c.domain === url.host : domainMatches(url.host, c.domain, url.isIp);
    return hostMatches && pathMatches(url.path, c.path);
  }

  #select(url: CookieUrl, context: CookieRequestContext): StoredCookie[] {
    const now = Date.now();
    const crossSite = context.crossSite === true;
    const laxAllowed = !crossSite || SAFE_METHODS.has((context.method ?? 'GET').toUpperCase());
    const out: StoredCookie[] = [];
    for (const c of this.#store.findBySite(url.registrable)) {
      if (isExpired(c, now)) {
        this.#store.remove(c);
        continue;
      }
      if (!this.#covers(c, url) || (c.secure && !url.secure)) continue;
      if (crossSite && (c.sameSite === 'Strict' || (c.sameSite !== 'None' && !laxAllowed))) continue;
      out.push(c);
    }
    if (out.length === 0) return out;
    if (out.length > 1) out.sort(headerOrder);
    for (const c of out) {
      // Last access is kept to the second: a store (SQLite) is written at most once a second per cookie.
      if (now - c.lastAccess < ACCESS_GRANULARITY_MS) continue;
      c.lastAccess = now;
      this.#store.put(c);
    }
    return out;
  }

  /** Evicts down to the caps once a site holds `siteCount` cookies: expired cookies first, then the least recently used. */
  #enforceCaps(site: string, siteCount: number, now: number): void {
    if (siteCount > this.#maxPerDomain) {
      const cookies = this.#store.findBySite(site);
      this.#evict(cookies, cookies.length - this.#maxPerDomain, now);
    }
    const total = this.#store.count();
    if (total > this.#max) this.#evict(this.#store.all(), total - this.#max, now);
  }

  #evict(cookies: StoredCookie[], excess: number, now: number): void {
    cookies.sort((a, b) => Number(isExpired(b, now)) - Number(isExpired(a, now)) || a.lastAccess - b.lastAccess || a.creation - b.creation);
    for (let i = 0; i < excess; i++) this.#store.remove(cookies[i]!);
  }
}

/** The two cookies' domains domain-match one way or the other and the new path is under the old one. */
function overlaps(old: StoredCookie, cookie: StoredCookie): boolean {
  const domains = domainMatches(old.domain, cookie.domain, false) || domainMatches(cookie.domain, old.domain, false);
  return domains && pathMatches(cookie.path, old.path);
}
