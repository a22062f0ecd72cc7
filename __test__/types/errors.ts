// `errors` / `mockErrors` are namespaces in type positions and each class's `name` / `code` is its
// literal, as in undici's typings. Compiled by types.test.ts against ferro's emitted declarations;
// every `@ts-expect-error` line fails the compile if its error does NOT occur.
import { errors, mockErrors } from 'ferro';

export function narrowing(err: errors.ConnectTimeoutError | errors.SocketError | errors.ResponseError): number {
  const base: errors.UndiciError = err;
  void base;
  switch (err.code) {
    case 'UND_ERR_SOCKET':
      return err.socket?.remotePort ?? 0;
    case 'UND_ERR_RESPONSE':
      return err.statusCode;
    default: {
      const name: 'ConnectTimeoutError' = err.name;
      void name;
      return 0;
    }
  }
}

const timeout = new errors.HeadersTimeoutError();
export const code: 'UND_ERR_HEADERS_TIMEOUT' = timeout.code;
// @ts-expect-error a literal code is not any other literal
export const wrong: 'UND_ERR_SOCKET' = timeout.code;
export const aborted: 'AbortError' = new errors.RequestAbortedError().name;
export const upstream: 'MissingUpstreamError' = new errors.BalancedPoolMissingUpstreamError().name;
export const body: Record<string, unknown> | string | null = new errors.ResponseError('x', 500).body;

export const notMatched: mockErrors.MockNotMatchedError = new mockErrors.MockNotMatchedError();
export const notMatchedCode: 'UND_MOCK_ERR_MOCK_NOT_MATCHED' = notMatched.code;
// @ts-expect-error not an UndiciError type member of mockErrors
export type Missing = mockErrors.UndiciError;
