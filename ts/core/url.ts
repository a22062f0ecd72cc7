// The URL forms an origin or a request target may take (a string, a URL, or a URL-like object such
// as node:url's legacy shape), checked and turned into a URL with the messages undici uses.
import { InvalidArgumentError } from './errors.js';

/** The object form of a URL (node:url's legacy shape and friends). */
export interface UrlObject {
  origin?: string;
  protocol?: string;
  hostname?: string;
  host?: string;
  port?: string | number;
  pathname?: string;
  search?: string;
  path?: string;
  href?: string;
}

const PROTOCOL_ERROR = 'Invalid URL protocol: the URL must start with `http:` or `https:`.';

function isHttp(s: unknown): boolean {
  return typeof s === 'string' && /^https?:/.test(s);
}

function isValidPort(port: unknown): boolean {
  const n = parseInt(String(port), 10);
  return n === Number(port) && n >= 0 && n <= 65535;
}

function checkString(url: Record<string, unknown>, key: string, what: string): void {
  const v = url[key];
  if (v != null && typeof v !== 'string') {
    throw new InvalidArgumentError(`Invalid URL ${what}: the ${what} must be a string or null/undefined.`);
  }
}

/**
 * A request URL. A string that is not a URL throws node's own TypeError (ERR_INVALID_URL), as
 * undici does; everything else that is wrong throws InvalidArgumentError.
 */
export function parseURL(url: unknown): URL {
  if (typeof url === 'string') {
    const parsed = new URL(url);
    if (!isHttp(parsed.protocol)) throw new InvalidArgumentError(PROTOCOL_ERROR);
    return parsed;
  }
  if (url === null || typeof url !== 'object') {
    throw new InvalidArgumentError('Invalid URL: The URL argument must be a non-null object.');
  }
  if (url instanceof URL) {
    if (!isHttp(url.protocol)) throw new InvalidArgumentError(PROTOCOL_ERROR);
    return url;
  }
  const obj = url as Record<string, unknown>;
  if (obj.port != null && obj.port !== '' && !isValidPort(obj.port)) {
    throw new InvalidArgumentError('Invalid URL: port must be a valid integer or a string representation of an integer.');
  }
  checkString(obj, 'path', 'path');
  checkString(obj, 'pathname', 'pathname');
  checkString(obj, 'hostname', 'hostname');
  checkString(obj, 'origin', 'origin');
  const protocol = typeof obj.protocol === 'string' ? obj.protocol : '';
  if (!isHttp(obj.origin || protocol)) throw new InvalidArgumentError(PROTOCOL_ERROR);
  const port = obj.port != null && obj.port !== '' ? obj.port : protocol === 'https:' ? 443 : 80;
  let origin = obj.origin != null ? (obj.origin as string) : `${protocol}//${(obj.hostname as string) || ''}:${port}`;
  let path = obj.path != null ? (obj.path as string) : `${(obj.pathname as string) || ''}${(obj.search as string) || ''}`;
  if (origin.endsWith('/')) origin = origin.slice(0, -1);
  if (path && path[0] !== '/') path = `/${path}`;
  // Concatenated, not `new URL(path, origin)`: an absolute URL in `path` must not replace the origin.
  return new URL(`${origin}${path}`);
}

/** An origin: a URL with no path beyond '/', no query and no fragment. */
export function parseOrigin(url: unknown): URL {
  const parsed = parseURL(url);
  if (parsed.pathname !== '/' || parsed.search || parsed.hash) throw new InvalidArgumentError('invalid url');
  return parsed;
}
