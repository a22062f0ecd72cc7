// Engine error codes (crates/engine/src/error.rs) → the typed errors users catch.
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

// Errors from custom connect functions stay on this side; the engine carries a key to them
// (error code 14, the key as message) so requests fail with the very object the user passed.
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

export const USER_ERROR = 14;

export function engineError(code: number, errno: string, message: string): Error {
  switch (code) {
    case 1:
      return new SocketError(message);
    case 2:
      return new HTTPParserError(`Parse Error: ${message}`, 'HPE_INVALID_CONSTANT');
    case 3:
      return new ResponseContentLengthMismatchError();
    case 4:
      return new HeadersOverflowError();
    case 5:
      return new HeadersTimeoutError();
    case 6:
      return new BodyTimeoutError();
    case 7:
      return new ConnectTimeoutError();
    case 8: {
      // Same shape as Node's own connect errors, so `err.code === 'ECONNREFUSED'` keeps working.
      const err = new Error(message) as NodeJS.ErrnoException;
      err.code = errno || 'ECONNRESET';
      err.syscall = 'connect';
      return err;
    }
    case 9:
      return new ResponseExceededMaxSizeError();
    case 10:
      return new InvalidArgumentError(message);
    case 12:
      return new InformationalError(message);
    case 13:
      return new RequestContentLengthMismatchError();
    case USER_ERROR:
      return (userErrors.get(message) as Error | undefined) ?? new SocketError(message);
    default:
      return new UndiciError(`ferro engine: ${message}`);
  }
}
