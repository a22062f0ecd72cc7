// The numbers that cross the boundary (event kinds, error codes, request flags) are defined once,
// in the engine; the TypeScript constants must match that table exactly, name for name.
import { describe, expect, it } from 'vitest';
import { binding } from '../ts/native/binding.js';
import { errors } from '../ts/index.js';
import * as errorCodes from '../ts/native/error-codes.js';
import * as events from '../ts/native/events.js';

/** The numeric exports of a module: its constants. */
function numbers(mod: object): Record<string, number> {
  return Object.fromEntries(Object.entries(mod).filter(([, v]) => typeof v === 'number')) as Record<string, number>;
}

describe('boundary codes', () => {
  const table = binding.boundaryCodes();

  it('event kinds in ts/native/events.ts are the engine\'s', () => {
    expect(numbers(events)).toEqual(table.events);
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

  it('every engine error code maps to a typed error, unknown ones to UndiciError', () => {
    for (const [name, code] of Object.entries(table.errors)) {
      const err = errorCodes.engineError(code, '', 'm');
      expect(err, name).toBeInstanceOf(errors.UndiciError);
    }
    expect(errorCodes.engineError(table.errors.Socket, '', 'x').constructor.name).toBe('SocketError');
    expect(errorCodes.engineError(999, '', 'x').constructor.name).toBe('UndiciError');
  });
});
