// A cookie as the jar keeps it (RFC 6265bis §5.7's cookie record), and the view of it that
// getCookies() hands out.

export type SameSite = 'Strict' | 'Lax' | 'None';

/** Everything the jar knows of one cookie; what a CookieStore keeps. */
export interface StoredCookie {
  name: string;
  value: string;
  /** Lower-case ASCII host or domain; for a host-only cookie the exact host it came from. */
  domain: string;
  path: string;
  /** ms since the epoch; null for a session cookie (kept until the jar is dropped). */
  expires: number | null;
  secure: boolean;
  httpOnly: boolean;
  /** Absent when the Set-Cookie gave none (or one the draft does not know). */
  sameSite?: SameSite;
  /** Sent only to `domain` itself, not to its subdomains (no Domain attribute). */
  hostOnly: boolean;
  /** The registrable domain (eTLD+1) or, for an IP address or a bare suffix, the host: the group the per-domain cap counts. */
  site: string;
  /** ms since the epoch. Kept when the cookie is replaced: orders the cookie header. */
  creation: number;
  /** ms since the epoch: the eviction order (least recently used first). */
  lastAccess: number;
}

/** One cookie as getCookies() returns it. */
export interface CookieJarCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** null for a session cookie. */
  expires: Date | null;
  secure: boolean;
  httpOnly: boolean;
  sameSite: SameSite | undefined;
}

/** What makes two cookies the same cookie: a new one with the same identity replaces the old. */
export function sameIdentity(a: StoredCookie, b: StoredCookie): boolean {
  return a.name === b.name && a.domain === b.domain && a.path === b.path && a.hostOnly === b.hostOnly;
}

export function publicView(c: StoredCookie): CookieJarCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    expires: c.expires === null ? null : new Date(c.expires),
    secure: c.secure,
    httpOnly: c.httpOnly,
    sameSite: c.sameSite,
  };
}

/** The pair as it goes on the wire: a nameless cookie is its value alone. */
export function cookiePair(c: StoredCookie): string {
  return c.name === '' ? c.value : `${c.name}=${c.value}`;
}
