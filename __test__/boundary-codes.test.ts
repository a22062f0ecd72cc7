// The numbers that cross the boundary (event kinds, error codes, request flags) are defined once,
// in the engine; the TypeScript constants must match that table exactly, name for name.
import { describe, expect, it } from 'vitest';
import { binding } from '../ts/native/binding.js';
import * as errorCodes from '../ts/native/error-codes.js';
import * as events from '../ts/native/events.js';
import { HEADER } from '../ts/native/frames.js';

/** The numeric exports of a module: its constants. */
function numbers(mod: object): Record<string, number> {
  return Object.fromEntries(Object.entries(mod).filter(([, v]) => typeof v === 'number')) as Record<string, number>;
}

describe('boundary codes', () => {
  const table = binding.boundaryCodes();

  it('event kinds in ts/native/events.ts are the engine\'s', () => {
    expect(numbers(events)).toEqual(table.events);
  });

  it('every batch the engine sends is framed alike: the DNS result and WebSocket kinds share the event kinds\' numbers, and ts/native/frames.ts reads the engine\'s header', () => {
    for (const kind of ['DNS_ADDRESSES', 'DNS_ERROR', 'WS_TEXT', 'WS_BINARY', 'WS_PING', 'WS_PONG', 'WS_CLOSE', 'WS_FAIL']) {
      expect(table.events[kind], kind).toBeDefined();
    }
    expect({ HEADER }).toEqual(table.frame);
  });

  it('error codes in ts/native/error-codes.ts are the engine\'s', () => {
    expect({ ...errorCodes.ErrorCode }).toEqual(table.errors);
    expect(errorCodes.USER_ERROR).toBe(table.errors.User);
  });

  it('request flags (RequestFlag in ts/native/events.ts) are the engine\'s', () => {
    expect({ ...events.RequestFlag }).toEqual(table.flags);
  });

  it('the table itself is well formed: no empty group, no number used twice in a group', () => {
    for (const group of [table.events, table.errors, table.flags]) {
      const values = Object.values(group);
      expect(values.length).toBeGreaterThan(5);
      expect(new Set(values).size).toBe(values.length);
    }
    // Flags are single bits, so any combination is unambiguous.
    for (const v of Object.values(table.flags)) expect(v & (v - 1)).toBe(0);
  });

  it('every engine error code maps to its typed error (class and code), unknown ones to UndiciError', () => {
    const expected: Record<string, [string, string]> = {
      Parser: ['HTTPParserError', 'HPE_INVALID_CONSTANT'],
      ContentLengthMismatch: ['ResponseContentLengthMismatchError', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH'],
      Socket: ['SocketError', 'UND_ERR_SOCKET'],
      HeadersTimeout: ['HeadersTimeoutError', 'UND_ERR_HEADERS_TIMEOUT'],
      RequestContentLengthMismatch: ['RequestContentLengthMismatchError', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH'],
      ConnectTimeout: ['ConnectTimeoutError', 'UND_ERR_CONNECT_TIMEOUT'],
      Info: ['InformationalError', 'LIB_ERR_INFO'],
      ResponseTooLarge: ['ResponseExceededMaxSizeError', 'UND_ERR_RES_EXCEEDED_MAX_SIZE'],
      HeadersOverflow: ['HeadersOverflowError', 'UND_ERR_HEADERS_OVERFLOW'],
      InvalidArgument: ['InvalidArgumentError', 'UND_ERR_INVALID_ARG'],
      // A connect failure is Node's shape: a plain Error carrying the errno as its code.
      Connect: ['Error', 'ECONNRESET'],
      Internal: ['UndiciError', 'UND_ERR'],
      BodyTimeout: ['BodyTimeoutError', 'UND_ERR_BODY_TIMEOUT'],
    };
    const errno: Record<string, string> = { Parser: 'HPE_INVALID_CONSTANT', Connect: 'ECONNRESET' };
    for (const [name, code] of Object.entries(table.errors)) {
      if (code === errorCodes.USER_ERROR) continue; // carries the user's own error (bridge.test.ts)
      const err = errorCodes.engineError(code, errno[name] ?? '', 'm') as Error & { code?: string };
      expect([err.constructor.name, err.code], name).toEqual(expected[name]);
    }
    expect(errorCodes.engineError(999, '', 'x').constructor.name).toBe('UndiciError');
  });
});
