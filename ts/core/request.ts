// What dispatch() receives, checked and packed: the handler and the request options are checked
// with undici's classes and messages before anything is queued or written, then the request is
// packed into the form the engine takes (one head string, a buffered body or a stream, flags).
import { RequestFlag } from '../native/events.js';
import { InvalidArgumentError, RequestContentLengthMismatchError } from './errors.js';
import { isHeaderValue, isToken, packHeaders, withQuery } from './headers.js';
import type { RequestBodyParts, StreamBody } from './request-body.js';
import type { DispatchHandler, DispatchOptions } from './types.js';

// The hook is read by the caller, by name: a read through a name passed in (handler[name]) is a
// megamorphic keyed load, and this runs seven times per request.
function checkHook(hook: unknown, name: keyof DispatchHandler, required: boolean): void {
  if (typeof hook === 'function' || (!required && hook === undefined)) return;
  throw new InvalidArgumentError(`invalid ${name} method`);
}

/** The guard every dispatch and handler wrapper begins with: a handler that is not an object is a caller's bug. */
export function assertHandlerObject(handler: unknown): asserts handler is DispatchHandler {
  if (handler === null || typeof handler !== 'object') throw new InvalidArgumentError('handler must be an object');
}

/** The hooks a controller-based handler must have for this request (undici's list). */
export function assertRequestHandler(handler: DispatchHandler, method: unknown, upgrade: unknown): void {
  assertHandlerObject(handler);
  checkHook(handler.onRequestStart, 'onRequestStart', true);
  checkHook(handler.onResponseError, 'onResponseError', true);
  checkHook(handler.onBodySent, 'onBodySent', false);
  checkHook(handler.onRequestSent, 'onRequestSent', false);
  if (upgrade || method === 'CONNECT') {
    checkHook(handler.onRequestUpgrade, 'onRequestUpgrade', true);
  } else {
    checkHook(handler.onResponseStart, 'onResponseStart', true);
    checkHook(handler.onResponseData, 'onResponseData', true);
    checkHook(handler.onResponseEnd, 'onResponseEnd', true);
  }
}

function checkTimeout(value: unknown, name: string): void {
  if (value != null && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
    throw new InvalidArgumentError(`invalid ${name}`);
  }
}

/** Options every request must get right; the path, method and headers are checked as they are packed. */
export function checkRequestOptions(opts: DispatchOptions): void {
  if (opts.dispatcher != null) {
    throw new InvalidArgumentError(
      'opts.dispatcher is not supported by instance methods. Pass opts.dispatcher to the top-level functions or call the dispatcher instance method directly.',
    );
  }
  checkTimeout(opts.headersTimeout, 'headersTimeout');
  checkTimeout(opts.bodyTimeout, 'bodyTimeout');
  if (opts.reset != null && typeof opts.reset !== 'boolean') throw new InvalidArgumentError('invalid reset');
  if (opts.expectContinue != null && typeof opts.expectContinue !== 'boolean') {
    throw new InvalidArgumentError('invalid expectContinue');
  }
  if (opts.throwOnError != null) throw new InvalidArgumentError('invalid throwOnError');
  if (opts.maxRedirections != null && opts.maxRedirections !== 0) {
    throw new InvalidArgumentError('maxRedirections is not supported, use the redirect interceptor');
  }
  if (opts.query != null && typeof opts.path === 'string' && /[?#]/.test(opts.path)) {
    throw new InvalidArgumentError('Query params cannot be passed when url already contains "?" or "#".');
  }
}

// Methods whose requests carry a payload: an empty one is still announced with content-length: 0.
// Compared, not looked up in a Set: a lookup hashes the method string on every request.
const expectsPayload = (method: string): boolean => method === 'POST' || method === 'PUT' || method === 'PATCH';
// Methods whose content-length undici never checks against the body.
const NO_LENGTH = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT']);

/** The body of a request that has none: empty bytes for a method that carries a payload. */
export function emptyBodyFor(method: string): Buffer | null {
  return expectsPayload(method) ? Buffer.alloc(0) : null;
}

/** A request in the engine's form, before diagnostics add to it. */
export interface PackedRequest {
  method: string;
  /** The request target, query included. */
  path: string;
  /** The host header's value. */
  host: string;
  /** The caller's headers, `name\0value\0...`, plus what the body's form implies. */
  headers: string;
  /** Headers the request's kind adds (an upgrade's), written right after host as undici does. */
  extra: string;
  /** A buffered body (null with a stream, or no body). */
  body: Buffer | null;
  stream: StreamBody | null;
  /** The content-length header's value, if any. */
  contentLength: number | null;
  /** RequestFlag bits. */
  flags: number;
}

/** Methods known to be tokens: compared instead of matching the token pattern (or hashing for a Set), once per request. */
function isCommonMethod(method: string): boolean {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'POST':
    case 'PUT':
    case 'DELETE':
    case 'PATCH':
    case 'OPTIONS':
      return true;
    default:
      return false;
  }
}

/** undici's request-target rule: any character from U+0021 to U+00FF (DEL and obs-text included), one byte each. */
function isRequestPath(path: string): boolean {
  return !/[^\u0021-\u00ff]/.test(path);
}

/** The last path that passed isRequestPath: clients send the same paths over and over. */
let lastRequestPath = '/';

/**
 * Checks the path, the method and the upgrade, in undici's order (before the handler's hooks are
 * looked at; the headers are checked as they are packed).
 */
export function checkRequestLine(opts: DispatchOptions): void {
  const { path, method, upgrade } = opts;
  if (typeof path !== 'string') throw new InvalidArgumentError('path must be a string');
  // CONNECT names an authority (host:port), not a path.
  if (method !== 'CONNECT' && path[0] !== '/' && !/^https?:\/\//.test(path) && !(method === 'OPTIONS' && path === '*')) {
    throw new InvalidArgumentError('path must be an absolute URL or start with a slash');
  }
  if (typeof method !== 'string') throw new InvalidArgumentError('method must be a string');
  if (!isCommonMethod(method) && !isToken(method)) throw new InvalidArgumentError('invalid request method');
  if (upgrade != null) {
    if (typeof upgrade !== 'string') throw new InvalidArgumentError('upgrade must be a string');
    // undici's rule for it is a header value's (obs-text, tab and spaces included); an empty one
    // stays refused here (undici takes '' as no upgrade at all).
    if (upgrade === '' || !isHeaderValue(upgrade)) throw new InvalidArgumentError('invalid upgrade header');
  }
}

/**
 * Checks the headers and packs the request. `host` is the origin's, used unless a host
 * header is given. A length mismatch throws, or with `strictContentLength` false warns.
 */
export function packRequest(opts: DispatchOptions, parts: RequestBodyParts, host: string, strictContentLength: boolean): PackedRequest {
  // checkRequestLine() has vetted the method, the path and the upgrade.
  const method = opts.method;
  const connect = method === 'CONNECT';
  let path = withQuery(opts.path, opts.query);
  if (path !== lastRequestPath) {
    if (!isRequestPath(path)) throw new InvalidArgumentError('invalid request path');
    lastRequestPath = path;
  }
  const h = packHeaders(opts.headers);
  const stream = parts.stream;
  // What the body's form implies (a Blob's type and size, a FormData boundary), unless set.
  if (parts.contentType !== null && !h.contentType) h.packed += `content-type\0${parts.contentType}\0`;
  if (parts.length !== null && h.contentLength === null) h.contentLength = parts.length;
  let body = parts.bytes;
  if (body === null && stream === null) body = emptyBodyFor(method);
  // undici's rule: only a non-empty body of a method that carries one must match its header;
  // with strictContentLength: false a mismatch is a warning and the body's own length is sent.
  const length = body?.length ?? 0;
  if (stream === null && h.contentLength !== null && length > 0 && length !== h.contentLength && !NO_LENGTH.has(method)) {
    if (strictContentLength) throw new RequestContentLengthMismatchError();
    process.emitWarning(new RequestContentLengthMismatchError());
  }
  let extra = '';
  if (opts.upgrade != null) extra = `connection\0upgrade\0upgrade\0${opts.upgrade}\0`;
  let flags = 0;
  if (opts.idempotent ?? (method === 'GET' || method === 'HEAD')) flags |= RequestFlag.IDEMPOTENT;
  if (opts.blocking ?? method !== 'HEAD') flags |= RequestFlag.BLOCKING;
  if (opts.reset === true || h.reset) flags |= RequestFlag.RESET;
  // Upgrades and CONNECT take the connection over: never pipelined, never reused.
  if (opts.upgrade != null || connect) flags |= RequestFlag.UPGRADE;
  if (stream !== null) flags |= RequestFlag.STREAM_BODY;
  if (opts.expectContinue === true) flags |= RequestFlag.EXPECT_CONTINUE;
  return { method, path, host: h.host ?? host, headers: h.packed, extra, body, stream, contentLength: h.contentLength, flags };
}
