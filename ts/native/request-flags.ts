// Request flags understood by the engine (crates/engine/src/request.rs `flags`; the two are
// checked against each other by __test__/boundary-codes.test.ts).
export const IDEMPOTENT = 1;
/** No further pipelining on the connection until this request's headers arrived. */
export const BLOCKING = 2;
/** Send `connection: close` and close the connection after the response. */
export const RESET = 4;
export const UPGRADE = 8;
/** The body arrives in pieces after dispatch (`NativeEngine.write` / `end`). */
export const STREAM_BODY = 16;
/** Report SENT when the head is written (debug output, diagnostics channels). */
export const OBSERVE = 32;
/** Send `expect: 100-continue` and hold the body until a 100 arrives (HTTP/2 only). */
export const EXPECT_CONTINUE = 64;
