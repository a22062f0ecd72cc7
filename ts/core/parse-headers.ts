// undici's `util` export: the raw-header helpers handler code written for undici calls
// (`util.parseHeaders(rawHeaders)` in onHeaders / onResponseStarted, `util.headerNameToString`).
// Header bytes are latin1, as everywhere in ferro.

type RawValue = Buffer | string | (Buffer | string)[];

function asText(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('latin1');
}

/** A header name as a lowercase string. */
function headerNameToString(value: string | Buffer): string {
  return asText(value).toLowerCase();
}

/**
 * Flat [name, value, name, value, …] raw headers as a record of lowercase names; a repeated name
 * collects its values in an array. Written into `obj` when given, which is returned.
 */
function parseHeaders(headers: RawValue[], obj: Record<string, string | string[]> = {}): Record<string, string | string[]> {
  for (let i = 0; i < headers.length; i += 2) {
    const key = headerNameToString(headers[i] as Buffer | string);
    const raw = headers[i + 1]!;
    const value = Array.isArray(raw) ? raw.map(asText) : asText(raw);
    // Object.hasOwn, not `in`: a header named like an Object.prototype member ('constructor',
    // '__proto__') is a header like any other.
    if (!Object.hasOwn(obj, key)) {
      Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
      continue;
    }
    const existing = obj[key]!;
    const list = typeof existing === 'string' ? [existing] : existing;
    if (Array.isArray(value)) list.push(...value);
    else list.push(value);
    obj[key] = list;
  }
  return obj;
}

/** The `util` namespace object, as undici exports it. */
export const util = { parseHeaders, headerNameToString };
