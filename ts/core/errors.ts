// Error classes with undici's names and codes, so code written against undici can keep matching on
// `err.code`, `err.name` and `instanceof`.
//
// `instanceof` is decided by a brand rather than the prototype chain: every class stamps its
// prototype with `Symbol.for('lib.error.<CODE>')`, and checks for that key. Two copies of this
// package (say, one bundled, one in node_modules) share `Symbol.for` keys, so an error thrown by
// one copy still matches the classes of the other.

import type { IncomingHttpHeaders } from 'node:http';

/** Static key under which each class keeps the global brand symbol it checks for. */
const kBrand = Symbol('lib.error.brand');

type Ctor<T> = abstract new (...args: never[]) => T;

/** Shared by every class below; `this` is the class on the right of `instanceof`. */
function hasBrand(ctor: object, instance: unknown): boolean {
  // A user subclass that was never branded would otherwise inherit its parent's brand and match
  // every instance of the parent; give it ordinary prototype-chain semantics instead.
  if (!Object.prototype.hasOwnProperty.call(ctor, kBrand)) {
    return Function.prototype[Symbol.hasInstance].call(ctor, instance);
  }
  const key = (ctor as { [kBrand]: symbol })[kBrand];
  return (
    (typeof instance === 'object' || typeof instance === 'function') &&
    instance !== null &&
    (instance as Record<symbol, unknown>)[key] === true
  );
}

function brand(ctor: Ctor<Error>, id: string): void {
  const key = Symbol.for(`lib.error.${id}`);
  // Non-enumerable so it never shows up in inspection or deep-equality checks.
  Object.defineProperty(ctor.prototype, key, { value: true });
  Object.defineProperty(ctor, kBrand, { value: key });
}

export class UndiciError extends Error {
  code: string;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UndiciError';
    this.code = 'UND_ERR';
  }

  static override [Symbol.hasInstance]<T>(this: Ctor<T>, instance: unknown): instance is T {
    return hasBrand(this, instance);
  }
}
brand(UndiciError, 'UND_ERR');

export class ConnectTimeoutError extends UndiciError {
  declare name: 'ConnectTimeoutError';
  declare code: 'UND_ERR_CONNECT_TIMEOUT';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Connect Timeout Error', options);
    this.name = 'ConnectTimeoutError';
    this.code = 'UND_ERR_CONNECT_TIMEOUT';
  }
}
brand(ConnectTimeoutError, 'UND_ERR_CONNECT_TIMEOUT');

export class HeadersTimeoutError extends UndiciError {
  declare name: 'HeadersTimeoutError';
  declare code: 'UND_ERR_HEADERS_TIMEOUT';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Headers Timeout Error', options);
    this.name = 'HeadersTimeoutError';
    this.code = 'UND_ERR_HEADERS_TIMEOUT';
  }
}
brand(HeadersTimeoutError, 'UND_ERR_HEADERS_TIMEOUT');

export class HeadersOverflowError extends UndiciError {
  declare name: 'HeadersOverflowError';
  declare code: 'UND_ERR_HEADERS_OVERFLOW';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Headers Overflow Error', options);
    this.name = 'HeadersOverflowError';
    this.code = 'UND_ERR_HEADERS_OVERFLOW';
  }
}
brand(HeadersOverflowError, 'UND_ERR_HEADERS_OVERFLOW');

export class BodyTimeoutError extends UndiciError {
  declare name: 'BodyTimeoutError';
  declare code: 'UND_ERR_BODY_TIMEOUT';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Body Timeout Error', options);
    this.name = 'BodyTimeoutError';
    this.code = 'UND_ERR_BODY_TIMEOUT';
  }
}
brand(BodyTimeoutError, 'UND_ERR_BODY_TIMEOUT');

export class InvalidArgumentError extends UndiciError {
  declare name: 'InvalidArgumentError';
  declare code: 'UND_ERR_INVALID_ARG';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Invalid Argument Error', options);
    this.name = 'InvalidArgumentError';
    this.code = 'UND_ERR_INVALID_ARG';
  }
}
brand(InvalidArgumentError, 'UND_ERR_INVALID_ARG');

export class InvalidReturnValueError extends UndiciError {
  declare name: 'InvalidReturnValueError';
  declare code: 'UND_ERR_INVALID_RETURN_VALUE';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Invalid Return Value Error', options);
    this.name = 'InvalidReturnValueError';
    this.code = 'UND_ERR_INVALID_RETURN_VALUE';
  }
}
brand(InvalidReturnValueError, 'UND_ERR_INVALID_RETURN_VALUE');

export class AbortError extends UndiciError {
  declare name: 'AbortError';
  // RequestAbortedError (UND_ERR_ABORTED) is a subclass, so both codes are AbortError's.
  declare code: 'UND_ERR_ABORT' | 'UND_ERR_ABORTED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'The operation was aborted', options);
    this.name = 'AbortError';
    this.code = 'UND_ERR_ABORT';
  }
}
brand(AbortError, 'UND_ERR_ABORT');

export class RequestAbortedError extends AbortError {
  declare name: 'AbortError';
  declare code: 'UND_ERR_ABORTED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Request aborted', options);
    // undici keeps the DOM-style name here; only the code tells it apart from AbortError.
    this.name = 'AbortError';
    this.code = 'UND_ERR_ABORTED';
  }
}
brand(RequestAbortedError, 'UND_ERR_ABORTED');

export class InformationalError extends UndiciError {
  declare name: 'InformationalError';
  // The spec fixes this code (a GOAWAY's `disconnect` error); undici's is UND_ERR_INFO.
  declare code: 'LIB_ERR_INFO';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Request information', options);
    this.name = 'InformationalError';
    // The spec names this code literally (a GOAWAY's `disconnect` error carries it).
    this.code = 'LIB_ERR_INFO';
  }
}
brand(InformationalError, 'UND_ERR_INFO');

export class RequestContentLengthMismatchError extends UndiciError {
  declare name: 'RequestContentLengthMismatchError';
  declare code: 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Request body length does not match content-length header', options);
    this.name = 'RequestContentLengthMismatchError';
    this.code = 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH';
  }
}
brand(RequestContentLengthMismatchError, 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH');

export class ResponseContentLengthMismatchError extends UndiciError {
  declare name: 'ResponseContentLengthMismatchError';
  declare code: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Response body length does not match content-length header', options);
    this.name = 'ResponseContentLengthMismatchError';
    this.code = 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';
  }
}
brand(ResponseContentLengthMismatchError, 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH');

export class ClientDestroyedError extends UndiciError {
  declare name: 'ClientDestroyedError';
  declare code: 'UND_ERR_DESTROYED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'The client is destroyed', options);
    this.name = 'ClientDestroyedError';
    this.code = 'UND_ERR_DESTROYED';
  }
}
brand(ClientDestroyedError, 'UND_ERR_DESTROYED');

export class ClientClosedError extends UndiciError {
  declare name: 'ClientClosedError';
  declare code: 'UND_ERR_CLOSED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'The client is closed', options);
    this.name = 'ClientClosedError';
    this.code = 'UND_ERR_CLOSED';
  }
}
brand(ClientClosedError, 'UND_ERR_CLOSED');

/** Snapshot of the connection a SocketError happened on (the engine owns the real socket). */
export interface SocketInfo {
  localAddress?: string;
  localPort?: number;
  remoteAddress?: string;
  remotePort?: number;
  remoteFamily?: string;
  timeout?: number;
  bytesWritten?: number;
  bytesRead?: number;
}

export class SocketError extends UndiciError {
  declare name: 'SocketError';
  declare code: 'UND_ERR_SOCKET';
  socket: SocketInfo | null;

  constructor(message?: string, socket?: SocketInfo | null, options?: ErrorOptions) {
    super(message || 'Socket error', options);
    this.name = 'SocketError';
    this.code = 'UND_ERR_SOCKET';
    this.socket = socket ?? null;
  }
}
brand(SocketError, 'UND_ERR_SOCKET');

export class NotSupportedError extends UndiciError {
  declare name: 'NotSupportedError';
  declare code: 'UND_ERR_NOT_SUPPORTED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Not supported error', options);
    this.name = 'NotSupportedError';
    this.code = 'UND_ERR_NOT_SUPPORTED';
  }
}
brand(NotSupportedError, 'UND_ERR_NOT_SUPPORTED');

export class BalancedPoolMissingUpstreamError extends UndiciError {
  declare name: 'MissingUpstreamError';
  declare code: 'UND_ERR_BPL_MISSING_UPSTREAM';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'No upstream has been added to the BalancedPool', options);
    // undici's name for this one differs from the class name.
    this.name = 'MissingUpstreamError';
    this.code = 'UND_ERR_BPL_MISSING_UPSTREAM';
  }
}
brand(BalancedPoolMissingUpstreamError, 'UND_ERR_BPL_MISSING_UPSTREAM');

/**
 * A malformed response. Not an UndiciError (as in undici): its code is the parser's own
 * `HPE_*` code. `code` may be given with or without the `HPE_` prefix.
 */
export class HTTPParserError extends Error {
  declare name: 'HTTPParserError';
  code: string | undefined;
  data: string | undefined;

  constructor(message?: string, code?: string | null, data?: string | Buffer | null) {
    super(message);
    this.name = 'HTTPParserError';
    this.code = code ? (code.startsWith('HPE_') ? code : `HPE_${code}`) : undefined;
    this.data = data != null ? data.toString() : undefined;
  }

  static override [Symbol.hasInstance]<T>(this: Ctor<T>, instance: unknown): instance is T {
    return hasBrand(this, instance);
  }
}
brand(HTTPParserError, 'UND_ERR_HTTP_PARSER');

export class ResponseExceededMaxSizeError extends UndiciError {
  declare name: 'ResponseExceededMaxSizeError';
  declare code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Response content exceeded max size', options);
    this.name = 'ResponseExceededMaxSizeError';
    this.code = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';
  }
}
brand(ResponseExceededMaxSizeError, 'UND_ERR_RES_EXCEEDED_MAX_SIZE');

export class RequestRetryError extends UndiciError {
  declare name: 'RequestRetryError';
  declare code: 'UND_ERR_REQ_RETRY';
  statusCode: number;
  headers: IncomingHttpHeaders | Record<string, string | string[]> | null;
  data: unknown;

  constructor(
    message: string | undefined,
    statusCode: number,
    info: { headers?: IncomingHttpHeaders | Record<string, string | string[]> | null; data?: unknown } = {},
  ) {
    super(message || 'Request retry error');
    this.name = 'RequestRetryError';
    this.code = 'UND_ERR_REQ_RETRY';
    this.statusCode = statusCode;
    this.data = info.data;
    this.headers = info.headers ?? null;
  }
}
brand(RequestRetryError, 'UND_ERR_REQ_RETRY');

export class ResponseError extends UndiciError {
  declare name: 'ResponseError';
  declare code: 'UND_ERR_RESPONSE';
  statusCode: number;
  headers: IncomingHttpHeaders | Record<string, string | string[]> | null;
  /** The error body as read: parsed JSON for a JSON content type, else text (undici's type). */
  body: Record<string, unknown> | string | null;
  bodyTruncated: boolean;

  constructor(
    message: string | undefined,
    statusCode: number,
    info: {
      headers?: IncomingHttpHeaders | Record<string, string | string[]> | null;
      body?: unknown;
      bodyTruncated?: boolean;
    } = {},
  ) {
    super(message || 'Response error');
    this.name = 'ResponseError';
    this.code = 'UND_ERR_RESPONSE';
    this.statusCode = statusCode;
    this.body = (info.body ?? null) as Record<string, unknown> | string | null;
    this.bodyTruncated = info.bodyTruncated ?? false;
    this.headers = info.headers ?? null;
  }
}
brand(ResponseError, 'UND_ERR_RESPONSE');

export class SecureProxyConnectionError extends UndiciError {
  declare name: 'SecureProxyConnectionError';
  declare code: 'UND_ERR_PRX_TLS';
  constructor(cause?: unknown, message?: string, options?: ErrorOptions) {
    super(message || 'Secure Proxy Connection failed', { cause, ...options });
    this.name = 'SecureProxyConnectionError';
    this.code = 'UND_ERR_PRX_TLS';
  }
}
brand(SecureProxyConnectionError, 'UND_ERR_PRX_TLS');

export class ProxyConnectionError extends UndiciError {
  declare name: 'ProxyConnectionError';
  declare code: 'UND_ERR_PRX_CONN';
  constructor(cause?: unknown, message?: string, options?: ErrorOptions) {
    super(message || 'Proxy Connection failed', { cause, ...options });
    this.name = 'ProxyConnectionError';
    this.code = 'UND_ERR_PRX_CONN';
  }
}
brand(ProxyConnectionError, 'UND_ERR_PRX_CONN');

/** A SOCKS5 proxy refused or broke the handshake; `code` says which step (UND_ERR_SOCKS5_*). */
export class Socks5ProxyError extends UndiciError {
  declare name: 'Socks5ProxyError';
  constructor(message?: string, code?: string, options?: ErrorOptions) {
    super(message || 'SOCKS5 proxy error', options);
    this.name = 'Socks5ProxyError';
    this.code = code || 'UND_ERR_SOCKS5';
  }
}
brand(Socks5ProxyError, 'UND_ERR_SOCKS5');

export class MaxRedirectsError extends UndiciError {
  declare name: 'MaxRedirectsError';
  declare code: 'UND_ERR_REDIRECT_MAX';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'max redirects', options);
    this.name = 'MaxRedirectsError';
    this.code = 'UND_ERR_REDIRECT_MAX';
  }
}
brand(MaxRedirectsError, 'UND_ERR_REDIRECT_MAX');

export class MaxOriginsReachedError extends UndiciError {
  declare name: 'MaxOriginsReachedError';
  declare code: 'UND_ERR_MAX_ORIGINS_REACHED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Maximum allowed origins reached', options);
    this.name = 'MaxOriginsReachedError';
    this.code = 'UND_ERR_MAX_ORIGINS_REACHED';
  }
}
brand(MaxOriginsReachedError, 'UND_ERR_MAX_ORIGINS_REACHED');

/** ferro: a request waited longer than the Agent's `maxQueueTime` for a connection under its `maxGlobalConnections`. */
export class QueueTimeoutError extends UndiciError {
  declare name: 'QueueTimeoutError';
  declare code: 'UND_ERR_QUEUE_TIMEOUT';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'Request waited too long for a connection', options);
    this.name = 'QueueTimeoutError';
    this.code = 'UND_ERR_QUEUE_TIMEOUT';
  }
}
brand(QueueTimeoutError, 'UND_ERR_QUEUE_TIMEOUT');

export class MockNotMatchedError extends UndiciError {
  declare name: 'MockNotMatchedError';
  declare code: 'UND_MOCK_ERR_MOCK_NOT_MATCHED';
  constructor(message?: string, options?: ErrorOptions) {
    super(message || 'The request does not match any registered mock dispatches', options);
    this.name = 'MockNotMatchedError';
    this.code = 'UND_MOCK_ERR_MOCK_NOT_MATCHED';
  }
}
brand(MockNotMatchedError, 'UND_MOCK_ERR_MOCK_NOT_MATCHED');

/** The `errors` namespace of the public API. */
export const errors = {
  UndiciError,
  ConnectTimeoutError,
  HeadersTimeoutError,
  HeadersOverflowError,
  BodyTimeoutError,
  ResponseError,
  InvalidArgumentError,
  InvalidReturnValueError,
  AbortError,
  RequestAbortedError,
  InformationalError,
  RequestContentLengthMismatchError,
  ResponseContentLengthMismatchError,
  ClientDestroyedError,
  ClientClosedError,
  SocketError,
  NotSupportedError,
  BalancedPoolMissingUpstreamError,
  HTTPParserError,
  ResponseExceededMaxSizeError,
  RequestRetryError,
  SecureProxyConnectionError,
  ProxyConnectionError,
  Socks5ProxyError,
  MaxRedirectsError,
  MaxOriginsReachedError,
  QueueTimeoutError,
  MockNotMatchedError,
} as const;

// `errors.X` also names the instance type of each class, as undici's `errors` namespace does, so
// `catch (e) { if (e instanceof errors.SocketError) … }` and `let e: errors.UndiciError` both work.
type ErrorClasses = typeof errors;
export declare namespace errors {
  export type UndiciError = InstanceType<ErrorClasses['UndiciError']>;
  export type ConnectTimeoutError = InstanceType<ErrorClasses['ConnectTimeoutError']>;
  export type HeadersTimeoutError = InstanceType<ErrorClasses['HeadersTimeoutError']>;
  export type HeadersOverflowError = InstanceType<ErrorClasses['HeadersOverflowError']>;
  export type BodyTimeoutError = InstanceType<ErrorClasses['BodyTimeoutError']>;
  export type ResponseError = InstanceType<ErrorClasses['ResponseError']>;
  export type InvalidArgumentError = InstanceType<ErrorClasses['InvalidArgumentError']>;
  export type InvalidReturnValueError = InstanceType<ErrorClasses['InvalidReturnValueError']>;
  export type AbortError = InstanceType<ErrorClasses['AbortError']>;
  export type RequestAbortedError = InstanceType<ErrorClasses['RequestAbortedError']>;
  export type InformationalError = InstanceType<ErrorClasses['InformationalError']>;
  export type RequestContentLengthMismatchError = InstanceType<ErrorClasses['RequestContentLengthMismatchError']>;
  export type ResponseContentLengthMismatchError = InstanceType<ErrorClasses['ResponseContentLengthMismatchError']>;
  export type ClientDestroyedError = InstanceType<ErrorClasses['ClientDestroyedError']>;
  export type ClientClosedError = InstanceType<ErrorClasses['ClientClosedError']>;
  export type SocketError = InstanceType<ErrorClasses['SocketError']>;
  export type NotSupportedError = InstanceType<ErrorClasses['NotSupportedError']>;
  export type BalancedPoolMissingUpstreamError = InstanceType<ErrorClasses['BalancedPoolMissingUpstreamError']>;
  export type HTTPParserError = InstanceType<ErrorClasses['HTTPParserError']>;
  export type ResponseExceededMaxSizeError = InstanceType<ErrorClasses['ResponseExceededMaxSizeError']>;
  export type RequestRetryError = InstanceType<ErrorClasses['RequestRetryError']>;
  export type SecureProxyConnectionError = InstanceType<ErrorClasses['SecureProxyConnectionError']>;
  export type ProxyConnectionError = InstanceType<ErrorClasses['ProxyConnectionError']>;
  export type Socks5ProxyError = InstanceType<ErrorClasses['Socks5ProxyError']>;
  export type MaxRedirectsError = InstanceType<ErrorClasses['MaxRedirectsError']>;
  export type QueueTimeoutError = InstanceType<ErrorClasses['QueueTimeoutError']>;
  export type MaxOriginsReachedError = InstanceType<ErrorClasses['MaxOriginsReachedError']>;
  export type MockNotMatchedError = InstanceType<ErrorClasses['MockNotMatchedError']>;
}
