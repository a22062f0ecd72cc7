// What a mock sees of a request: the dispatch options reduced to comparable strings (origin,
// method, normalized path, body text, headers by lower-case name). Both sides of a match go
// through the same normalization so that equivalent spellings of a path or query compare equal.
import { Readable } from 'node:stream';
import { InvalidArgumentError } from '../core/errors.js';
import { hasSafeIterator, withQuery } from '../core/headers.js';
import { isEventStream, type EventStream } from '../core/request-body.js';
import type { DispatchOptions } from '../core/types.js';

export interface MockRequestKey {
  origin: string;
  method: string;
  /** Path with `query` merged in, the pathname normalized and the parameters sorted. */
  path: string;
  body: string | undefined;
  /** Request headers by lower-case name, repeated values joined with ", ". */
  headers: Record<string, string> | undefined;
  /** The request headers as the caller wrote them (object form), for messages and callbacks. */
  headersAsGiven: Record<string, string | string[]> | undefined;
}

const BASE = 'http://mock.invalid';

/** An origin as a comparable string: scheme, host and non-default port, no trailing slash. */
export function normalizeOrigin(origin: string | URL): string {
  try {
    const url = origin instanceof URL ? origin : new URL(String(origin));
    if (url.origin !== 'null') return url.origin;
  } catch {
    /* not a URL: compared as written */
  }
  return String(origin).replace(/\/+$/, '');
}

// `a[]=1&a[]=2` and `a=1,2` both mean a=1&a=2 (acceptNonStandardSearchParameters); a quoted
// value is a single string even when it holds commas.
function standardizeQuery(search: string): string {
  const out = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(search)) {
    const key = name.endsWith('[]') ? name.slice(0, -2) : name;
    if (/^(['"]).*\1$/.test(value) || !value.includes(',')) out.append(key, value);
    else for (const part of value.split(',')) out.append(key, part);
  }
  return out.toString();
}

/**
 * Normalizes a path for matching: the pathname as the URL parser writes it, the fragment
 * dropped, the query parameters sorted by name (their order carries no meaning to a server).
 */
export function normalizePath(path: string, nonStandardQuery = false): string {
  let rest = path;
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  let pathname = q === -1 ? rest : rest.slice(0, q);
  let search = q === -1 ? '' : rest.slice(q + 1);
  if (pathname.startsWith('/')) {
    try {
      pathname = new URL(BASE + pathname).pathname;
    } catch {
      /* keep it as written */
    }
  }
  if (nonStandardQuery) search = standardizeQuery(search);
  const params = new URLSearchParams(search);
  params.sort();
  const qs = params.toString();
  return qs ? `${pathname}?${qs}` : pathname;
}

/** The path with any trailing slashes of its pathname removed ("/" stays "/"). */
export function stripTrailingSlash(path: string): string {
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  let end = pathname.length;
  // '/' itself strips to '' too, so that an intercept for '' and a request for '/' meet.
  while (end > 0 && pathname[end - 1] === '/') end--;
  return pathname.slice(0, end) + (q === -1 ? '' : path.slice(q));
}

function headerText(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  return String(value);
}

/** Request headers in any accepted form, as an object with the caller's names. */
export function headersAsObject(headers: unknown): Record<string, string | string[]> | undefined {
  if (headers == null) return undefined;
  const out: Record<string, string | string[]> = {};
  const add = (name: string, value: unknown): void => {
    if (value === undefined) return;
    const values = Array.isArray(value) ? value.map(headerText) : [headerText(value)];
    const prev = out[name];
    if (prev === undefined) out[name] = values.length === 1 ? values[0]! : values;
    else out[name] = [...(Array.isArray(prev) ? prev : [prev]), ...values];
  };
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) add(headerText(headers[i]), headers[i + 1]);
  } else if (typeof headers === 'object' && hasSafeIterator(headers)) {
    for (const pair of headers as Iterable<unknown>) {
      if (Array.isArray(pair)) add(headerText(pair[0]), pair[1]);
    }
  } else if (typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) add(name, value);
  }
  return out;
}

function lowerCased(headers: Record<string, string | string[]> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[key] = out[key] === undefined ? text : `${out[key]}, ${text}`;
  }
  return out;
}

/** Bodies that must be read before they can be compared (streams, iterables, blobs). */
export function isDeferredBody(body: unknown): boolean {
  if (body == null || typeof body === 'string' || body instanceof Uint8Array) return false;
  if (body instanceof ArrayBuffer || body instanceof URLSearchParams) return false;
  return (
    isEventStream(body) ||
    body instanceof Blob ||
    typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
    typeof (body as Iterable<unknown>)[Symbol.iterator] === 'function'
  );
}

function chunkBuffer(chunk: unknown): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new InvalidArgumentError('request body chunks must be strings, Buffers or Uint8Arrays');
}

/**
 * A streamed or iterable request body as Buffers, chunk by chunk, read only as far as the caller
 * iterates (leaving the loop early stops the source). A duck-typed stream (pipe + on, not a
 * node:stream Readable) is read through Readable.wrap, which speaks its data/end events.
 */
export async function* deferredBodyChunks(body: unknown): AsyncGenerator<Buffer> {
  if (body instanceof Blob) {
    yield Buffer.from(await body.arrayBuffer());
    return;
  }
  const source =
    isEventStream(body) && !(body instanceof Readable)
      ? new Readable().wrap(body as EventStream as unknown as NodeJS.ReadableStream)
      : (body as AsyncIterable<unknown>);
  for await (const chunk of source) yield chunkBuffer(chunk);
}

/** Reads a streamed or iterable request body whole, so that it can be matched and replayed. */
export async function readDeferredBody(body: unknown): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of deferredBodyChunks(body)) parts.push(chunk);
  return Buffer.concat(parts);
}

/** The body as text for matching; undefined when there is none. */
export function bodyText(body: unknown): string | undefined {
  if (body == null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  if (body instanceof URLSearchParams) return body.toString();
  return undefined;
}

export function requestKey(
  opts: DispatchOptions,
  origin: string,
  body: string | undefined,
  nonStandardQuery: boolean,
): MockRequestKey {
  if (typeof opts.path !== 'string') throw new InvalidArgumentError('opts.path must be a string');
  if (typeof opts.method !== 'string') throw new InvalidArgumentError('opts.method must be a string');
  const given = headersAsObject(opts.headers);
  return {
    origin,
    method: opts.method,
    path: normalizePath(withQuery(opts.path, opts.query), nonStandardQuery),
    body,
    headers: lowerCased(given),
    headersAsGiven: given,
  };
}
