// The facts of a request URL the cookie algorithms read (RFC 6265bis §5.1.2 - §5.1.4): its
// canonical host, its path, whether it is a secure channel; and domain- and path-matching.
import { isIP } from 'node:net';
import { InvalidArgumentError } from '../core/errors.js';
import { siteOf } from './public-suffix.js';

export interface CookieUrl {
  /** Lower-case ASCII (punycode) host; an IPv6 address keeps its brackets, as URL writes it. */
  host: string;
  isIp: boolean;
  /** The path without the query. */
  path: string;
  /** https / wss, or a loopback host (a "potentially trustworthy" origin, as browsers treat it). */
  secure: boolean;
  /** scheme + registrable domain: two URLs with the same site are same-site (schemeful). */
  site: string;
  /** The registrable domain alone. */
  registrable: string;
}

const SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);

function isLoopback(host: string, isIp: boolean): boolean {
  if (isIp) return host === '[::1]' || host.startsWith('127.');
  return host === 'localhost' || host.endsWith('.localhost');
}

function parse(url: string | URL): URL {
  try {
    return typeof url === 'string' ? new URL(url) : url instanceof URL ? url : new URL(String(url));
  } catch {
    throw new InvalidArgumentError(`cookie jar: not a URL: ${String(url)}`);
  }
}

/** The parts of a CookieUrl that depend on the origin alone (the interceptor keeps them per origin). */
export type CookieOrigin = Omit<CookieUrl, 'path'>;

function originFacts(parsed: URL): CookieOrigin {
  if (!SCHEMES.has(parsed.protocol) || parsed.hostname === '') {
    throw new InvalidArgumentError(`cookie jar: only http(s) and ws(s) URLs have cookies, not ${parsed.protocol}`);
  }
  const host = parsed.hostname;
  const ip = isIP(host.startsWith('[') ? host.slice(1, -1) : host) !== 0;
  const registrable = siteOf(host, ip);
  const tls = parsed.protocol === 'https:' || parsed.protocol === 'wss:';
  return { host, isIp: ip, secure: tls || isLoopback(host, ip), site: `${tls ? 'https' : 'http'}://${registrable}`, registrable };
}

/** `url` read for the cookie algorithms; InvalidArgumentError for anything but an http(s) / ws(s) URL. */
export function cookieUrl(url: string | URL): CookieUrl {
  const parsed = parse(url);
  return { ...originFacts(parsed), path: parsed.pathname || '/' };
}

/** The origin facts of `origin` (a URL; its path is ignored). */
export function cookieOrigin(origin: string): CookieOrigin {
  return originFacts(parse(origin));
}

/** §5.1.4: the directory of the request path, the default Path of a cookie it sets. */
export function defaultPath(path: string): string {
  if (!path.startsWith('/')) return '/';
  const last = path.lastIndexOf('/');
  return last === 0 ? '/' : path.slice(0, last);
}

/** §5.1.3: `host` is `domain` or a subdomain of it (an IP address only matches itself). */
export function domainMatches(host: string, domain: string, hostIsIp: boolean): boolean {
  if (host === domain) return true;
  return !hostIsIp && host.endsWith(domain) && host.charCodeAt(host.length - domain.length - 1) === 0x2e;
}

/** §5.1.4: the cookie path `cookiePath` covers the request path `path`. */
export function pathMatches(path: string, cookiePath: string): boolean {
  if (path === cookiePath) return true;
  if (!path.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || path.charCodeAt(cookiePath.length) === 0x2f;
}
