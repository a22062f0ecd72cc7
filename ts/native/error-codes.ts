// Engine error codes (crates/engine/src/error.rs `ErrorCode`; the two are checked against each
// other by __test__/boundary-codes.test.ts) → the typed errors users catch.
import {
  BodyTimeoutError,
  ConnectTimeoutError,
  HeadersOverflowError,
  HeadersTimeoutError,
  HTTPParserError,
  InformationalError,
  InvalidArgumentError,
  ResponseContentLengthMismatchError,
  RequestContentLengthMismatchError,
  ResponseExceededMaxSizeError,
  SocketError,
  UndiciError,
} from '../core/errors.js';
import { getSystemErrorMap } from 'node:util';
import { parseSocketInfo } from './addrs.js';

/** The engine's error codes, named as crates/engine/src/error.rs's `ErrorCode` variants. */
export const ErrorCode = {
  Socket: 1,
  Parser: 2,
  ContentLengthMismatch: 3,
  HeadersOverflow: 4,
  HeadersTimeout: 5,
  BodyTimeout: 6,
  ConnectTimeout: 7,
  Connect: 8,
  ResponseTooLarge: 9,
  InvalidArgument: 10,
  Internal: 11,
  Info: 12,
  RequestContentLengthMismatch: 13,
  User: 14,
} as const;

// Errors from custom connect functions stay on this side; the engine carries a key to them
// (ErrorCode.User, the key as message) so requests fail with the very object the user passed.
const userErrors = new Map<string, unknown>();
let nextUserError = 1;

/** Keeps `err` for the engine's events about it; returns the key to pass to the engine. */
export function holdUserError(err: unknown): string {
  const key = `ferro: connect failed (${nextUserError++})`;
  userErrors.set(key, err);
  return key;
}

export function releaseUserError(key: string): void {
  userErrors.delete(key);
}

export const USER_ERROR = ErrorCode.User;

/** `socket`: the connection the error happened on (an error record's socket field), if any. */
export function engineError(code: number, errno: string, message: string, socket = ''): Error {
  switch (code) {
    case ErrorCode.Socket:
      return new SocketError(message, parseSocketInfo(socket));
    case ErrorCode.Parser:
      return new HTTPParserError(`Parse Error: ${message}`, 'HPE_INVALID_CONSTANT');
    case ErrorCode.ContentLengthMismatch:
      return new ResponseContentLengthMismatchError();
    case ErrorCode.HeadersOverflow:
      return new HeadersOverflowError();
    case ErrorCode.HeadersTimeout:
      return new HeadersTimeoutError();
    case ErrorCode.BodyTimeout:
      return new BodyTimeoutError();
    case ErrorCode.ConnectTimeout:
      return new ConnectTimeoutError();
    case ErrorCode.Connect:
      return connectError(errno || 'ECONNRESET', message, socket);
    case ErrorCode.ResponseTooLarge:
      return new ResponseExceededMaxSizeError();
    case ErrorCode.InvalidArgument:
      return new InvalidArgumentError(message);
    case ErrorCode.Info:
      return new InformationalError(message);
    case ErrorCode.RequestContentLengthMismatch:
      return new RequestContentLengthMismatchError();
    case ErrorCode.User:
      return (userErrors.get(message) as Error | undefined) ?? new SocketError(message);
    default:
      return new UndiciError(`ferro engine: ${message}`);
  }
}

/** Node's errno numbers by code name (libuv's, negative on POSIX), read once. */
let errnos: Map<string, number> | undefined;

function errnoOf(code: string): number | undefined {
  if (errnos === undefined) {
    errnos = new Map();
    for (const [n, [name]] of getSystemErrorMap()) errnos.set(name, n);
  }
  return errnos.get(code);
}

/**
 * Same shape as Node's own `net` connect errors (which undici passes through): `code`, `errno`,
 * `syscall`, and the address tried when the engine names one (`socket`'s remote side) — code
 * that tells upstreams apart reads `err.port`.
 */
function connectError(code: string, message: string, socket: string): NodeJS.ErrnoException {
  const err = new Error(message) as NodeJS.ErrnoException & { address?: string; port?: number };
  const errno = errnoOf(code);
  if (errno !== undefined) err.errno = errno;
  err.code = code;
  err.syscall = 'connect';
  const at = parseSocketInfo(socket);
  if (at?.remoteAddress !== undefined) {
    err.address = at.remoteAddress;
    err.port = at.remotePort;
  }
  return err;
}
