// Request header forms (spec: LibHeaders) and the header rules, packed for the engine as
// "name\0value\0…". Checked before anything is written, each failure with its typed error.
import { InvalidArgumentError, NotSupportedError } from './errors.js';
import type { LibHeaders } from './types.js';

// The byte rules are undici's, and the engine's (crates/engine/src/request/rules.rs) checks the
// same; __test__/request-head-rules.test.ts holds the two to each other byte for byte.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A value is a byte string, as undici checks it: tab, visible ASCII and U+0080-U+00FF, each code
// point going out as one byte (latin1). So no CR, LF or NUL (a new header line or the end of the
// head: request smuggling), no other control, no DEL, and nothing above U+00FF.
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** A method or a header name (RFC 9110 tchar). */
export function isToken(s: string): boolean {
  return TOKEN.test(s);
}

export function isHeaderValue(s: string): boolean {
  return !BAD_VALUE.test(s);
}

/** Header strings as the bytes they stand for (rawHeaders, rawTrailers): one byte per code point. */
export function latin1Buffers(raw: string[]): Buffer[] {
  return raw.map((s) => Buffer.from(s, 'latin1'));
}

export interface PackedHeaders {
  /** "name\0value\0…" for every header the engine should write, host excluded. */
  packed: string;
  host: string | null;
  contentLength: number | null;
  /** `connection: close` was asked for. */
  reset: boolean;
  /** The caller set a content-type. */
  contentType: boolean;
}

function addOne(out: PackedHeaders, key: string, val: unknown): void {
  if (val === undefined) return;
  // undici sends a null value as an empty one.
  if (val === null) val = '';
  if (typeof key !== 'string' || !isToken(key)) {
    throw new InvalidArgumentError('invalid header key');
  }
  const name = key.toLowerCase();
  if (Array.isArray(val)) {
    if (name === 'host' || name === 'content-length' || name === 'connection') {
      throw new InvalidArgumentError(`invalid ${name} header`);
    }
    for (const v of val) addOne(out, key, v);
    return;
  }
  // Named as the caller spelled it, as undici does.
  if (typeof val === 'object' && val !== null) {
    throw new InvalidArgumentError(`invalid ${key} header`);
  }
  const value = typeof val === 'string' ? val : String(val);
  if (!isHeaderValue(value)) {
    throw new InvalidArgumentError(`invalid ${key} header`);
  }
  switch (name) {
    case 'host':
      if (out.host !== null) throw new InvalidArgumentError('duplicate host header');
      out.host = value;
      return;
    case 'content-length':
      if (out.contentLength !== null) throw new InvalidArgumentError('duplicate content-length header');
      if (!/^\d+$/.test(value)) throw new InvalidArgumentError('invalid content-length header');
      out.contentLength = Number(value);
      return;
    case 'connection': {
      const tokens = value.split(',');
      for (const t of tokens) {
        const tok = t.trim();
        if (!isToken(tok)) throw new InvalidArgumentError('invalid connection header');
        if (tok.toLowerCase() === 'close') out.reset = true;
      }
      // The engine writes the connection header itself (keep-alive or close).
      return;
    }
    case 'transfer-encoding':
    case 'keep-alive':
    case 'upgrade':
      throw new InvalidArgumentError(`invalid ${name} header`);
    case 'expect':
      throw new NotSupportedError('expect header not supported');
    case 'content-type':
      out.contentType = true;
  }
  // Sent as the caller spelled it, as undici does (HTTP/2 and HTTP/3 lowercase in the engine).
  out.packed += `${key}\0${value}\0`;
}

/**
 * Whether `headers` is to be iterated: its own Symbol.iterator, or one from a prototype other than
 * Object.prototype (Map, Headers, a class). One planted on Object.prototype (prototype pollution)
 * would otherwise turn every plain record into an empty list of headers.
 */
export function hasSafeIterator(headers: object): headers is Iterable<unknown> {
  if (Object.hasOwn(headers, Symbol.iterator)) return typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function';
  const proto: unknown = Object.getPrototypeOf(headers);
  return proto !== null && proto !== Object.prototype && typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function';
}

/**
 * Calls `visit(out, name, value)` for each name/value pair of any accepted header form, checking
 * the form itself. `out` is passed through so that callers need no closure (one per request).
 */
export function eachHeader<T>(headers: LibHeaders | undefined, visit: (out: T, name: string, value: unknown) => void, out: T): void {
  if (headers == null) return;
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) throw new InvalidArgumentError('headers array must be even');
    for (let i = 0; i < headers.length; i += 2) visit(out, headers[i] as string, headers[i + 1]);
    return;
  }
  if (typeof headers !== 'object') throw new InvalidArgumentError('headers must be an object or an array');
  if (hasSafeIterator(headers)) {
    for (const pair of headers) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new InvalidArgumentError('headers must be in key-value pair format');
      }
      visit(out, pair[0] as string, pair[1]);
    }
    return;
  }
  const rec = headers as Record<string, unknown>;
  for (const key in rec) visit(out, key, rec[key]);
}

export function packHeaders(headers: LibHeaders | undefined): PackedHeaders {
  const out: PackedHeaders = { packed: '', host: null, contentLength: null, reset: false, contentType: false };
  eachHeader(headers, addOne, out);
  return out;
}

/** A query value as undici (node:querystring) writes it: primitives as text, anything else empty. */
function queryValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return '';
}

/** Appends `query` to `path`, keys and values encoded with encodeURIComponent (spec: query). */
export function withQuery(path: string, query: Record<string, unknown> | null | undefined): string {
  if (query == null) return path;
  if (typeof query !== 'object') throw new InvalidArgumentError('query must be an object');
  let qs = '';
  for (const key of Object.keys(query)) {
    const v = query[key];
    const values = Array.isArray(v) ? v : [v];
    for (const item of values) {
      qs += `${qs ? '&' : ''}${encodeURIComponent(key)}=${encodeURIComponent(queryValue(item))}`;
    }
  }
  if (!qs) return path;
  return path + (path.includes('?') ? '&' : '?') + qs;
}
