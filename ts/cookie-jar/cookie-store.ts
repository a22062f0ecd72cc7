// Where a CookieJar keeps its cookies. The interface is synchronous because getCookies() is: a
// request's cookie header is built before it is sent, with no await on the path. The jar does all
// the RFC work (matching, expiry, eviction); a store only files records.
import type { StoredCookie } from './stored-cookie.js';

export interface CookieStore {
  /** Every cookie filed under `site` (StoredCookie.site). The jar may change one and put() it back. */
  findBySite(site: string): StoredCookie[];
  /** Every cookie. */
  all(): StoredCookie[];
  count(): number;
  /** Files `cookie`, replacing the one with the same name, domain, path and host-only flag. */
  put(cookie: StoredCookie): void;
  /** Removes the cookie with `cookie`'s name, domain, path and host-only flag, if there is one. */
  remove(cookie: StoredCookie): void;
  removeAll(): void;
}

function idOf(c: StoredCookie): string {
  // NUL cannot occur in any of the parts (the parser ignores a Set-Cookie holding a CTL).
  return `${c.domain}\0${c.path}\0${c.name}\0${c.hostOnly ? 1 : 0}`;
}

/** The default store: a Map per site, in this process's memory. */
export class MemoryCookieStore implements CookieStore {
  readonly #sites = new Map<string, Map<string, StoredCookie>>();
  #count = 0;

  findBySite(site: string): StoredCookie[] {
    const cookies = this.#sites.get(site);
    return cookies === undefined ? [] : [...cookies.values()];
  }

  all(): StoredCookie[] {
    const out: StoredCookie[] = [];
    for (const cookies of this.#sites.values()) for (const c of cookies.values()) out.push(c);
    return out;
  }

  count(): number {
    return this.#count;
  }

  put(cookie: StoredCookie): void {
    let cookies = this.#sites.get(cookie.site);
    if (cookies === undefined) this.#sites.set(cookie.site, (cookies = new Map()));
    const id = idOf(cookie);
    if (!cookies.has(id)) this.#count++;
    cookies.set(id, cookie);
  }

  remove(cookie: StoredCookie): void {
    const cookies = this.#sites.get(cookie.site);
    if (cookies === undefined || !cookies.delete(idOf(cookie))) return;
    this.#count--;
    if (cookies.size === 0) this.#sites.delete(cookie.site);
  }

  removeAll(): void {
    this.#sites.clear();
    this.#count = 0;
  }
}

const STORE_METHODS = ['findBySite', 'all', 'count', 'put', 'remove', 'removeAll'] as const;

/** True when `value` has every CookieStore method. */
export function isCookieStore(value: unknown): value is CookieStore {
  return (
    typeof value === 'object' &&
    value !== null &&
    STORE_METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  );
}
