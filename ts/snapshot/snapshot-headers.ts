// The header values a snapshot keeps: names in excludeHeaders are dropped whatever their case, and
// credentials are masked so that a fixture committed to a repository never holds a usable secret.
import type { SnapshotHeaders } from './snapshot-format.js';

/** Headers whose values are masked unless redactSecrets is false (lower case). */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** What a masked value (or the masked part of one) reads as in the file. */
const REDACTED = '[REDACTED]';

export interface HeaderPolicy {
  /** Lower-case names left out of snapshots entirely. */
  exclude: ReadonlySet<string>;
  /** Whether SECRET_HEADERS values are masked. */
  redact: boolean;
}

function maskCookiePair(pair: string): string {
  const trimmed = pair.trim();
  const eq = trimmed.indexOf('=');
  return eq > 0 ? `${trimmed.slice(0, eq)}=${REDACTED}` : REDACTED;
}

/**
 * The value with its secret part masked. What is kept is what helps reading a fixture without
 * being a credential: the auth scheme, cookie names, and set-cookie attributes.
 */
function redactValue(lowerName: string, value: string): string {
  if (lowerName === 'authorization' || lowerName === 'proxy-authorization') {
    const space = value.indexOf(' ');
    return space > 0 ? `${value.slice(0, space)} ${REDACTED}` : REDACTED;
  }
  if (lowerName === 'cookie') return value.split(';').map(maskCookiePair).join('; ');
  if (lowerName === 'set-cookie') {
    const semi = value.indexOf(';');
    return semi === -1 ? maskCookiePair(value) : maskCookiePair(value.slice(0, semi)) + value.slice(semi);
  }
  return value;
}

/** A copy of `headers` as a snapshot stores them: excluded names dropped, secrets masked. */
export function storedHeaders(headers: Readonly<SnapshotHeaders> | undefined, policy: HeaderPolicy): SnapshotHeaders {
  const out: SnapshotHeaders = {};
  if (headers == null) return out;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (policy.exclude.has(lower)) continue;
    if (policy.redact && SECRET_HEADERS.has(lower)) {
      out[name] = Array.isArray(value) ? value.map((v) => redactValue(lower, v)) : redactValue(lower, value);
    } else {
      out[name] = Array.isArray(value) ? [...value] : value;
    }
  }
  return out;
}
