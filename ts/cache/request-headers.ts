// Request headers in any accepted form (object, flat array, iterable of pairs) as one record with
// lower-case names, the shape cache keys and deduplication keys are built from.
import { InvalidArgumentError } from '../core/errors.js';
import { eachHeader } from '../core/headers.js';
import type { LibHeaders } from '../core/types.js';

export type HeaderRecord = Record<string, string | string[]>;

function add(out: HeaderRecord, name: unknown, value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof name !== 'string') throw new InvalidArgumentError(`invalid header key: ${String(name)}`);
  const key = name.toLowerCase();
  const values = Array.isArray(value) ? value.map(String) : [String(value)];
  const prior = out[key];
  if (prior === undefined) out[key] = values.length === 1 ? values[0]! : values;
  else out[key] = [...(Array.isArray(prior) ? prior : [prior]), ...values];
}

export function headerRecord(headers: LibHeaders | undefined): HeaderRecord {
  const out: HeaderRecord = Object.create(null) as HeaderRecord;
  eachHeader(headers, add, out);
  return out;
}

/** One comparable string for a header value (repeated lines joined as a list). */
export function headerText(value: string | string[] | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}
