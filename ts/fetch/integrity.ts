// Subresource Integrity for fetch's `integrity` option (W3C SRI, as the Fetch standard's main fetch
// applies it): the metadata is parsed, the strongest algorithm named is hashed over the whole
// (decoded) body as it arrives, and the body matches when any digest given for that algorithm does.
import { createHash, type Hash } from 'node:crypto';
import { abortReason, fetchFailed, type FetchHandler } from './fetch-handler.js';

/** The valid SRI hash algorithm tokens, weakest first (the spec's order is what "strongest" means). */
const ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;
type Algorithm = (typeof ALGORITHMS)[number];

/** The digests to accept, all for the strongest algorithm the metadata names. */
interface Strongest {
  algorithm: Algorithm;
  digests: string[];
}

// ASCII whitespace (Infra), what the metadata is split on.
const WHITESPACE = /[\t\n\f\r ]+/;

/**
 * The strongest metadata in `metadata` (SRI "parse metadata", then "get the strongest metadata"),
 * or null when it names no algorithm this knows: then any body matches.
 *
 * Each whitespace-separated token is `<algorithm>-<digest>[?options]`: options are ignored, a token
 * whose algorithm is not sha256 / sha384 / sha512 is ignored, the algorithm is matched without
 * regard to case (as undici and browsers do), and the digest is everything after the first `-`
 * (so a base64url digest, which may contain `-`, stays whole). A known algorithm with no digest
 * keeps an empty one, which no body matches.
 */
export function strongestMetadata(metadata: string): Strongest | null {
  let strongest: Strongest | null = null;
  for (const token of metadata.split(WHITESPACE)) {
    const question = token.indexOf('?');
    const expression = question === -1 ? token : token.slice(0, question);
    const dash = expression.indexOf('-');
    const name = (dash === -1 ? expression : expression.slice(0, dash)).toLowerCase();
    const rank = ALGORITHMS.indexOf(name as Algorithm);
    if (rank === -1) continue;
    const digest = dash === -1 ? '' : expression.slice(dash + 1);
    const current = strongest === null ? -1 : ALGORITHMS.indexOf(strongest.algorithm);
    if (rank > current) strongest = { algorithm: ALGORITHMS[rank]!, digests: [digest] };
    else if (rank === current) strongest!.digests.push(digest);
  }
  return strongest;
}

/**
 * A digest as compared: base64url's `-` and `_` read as base64's `+` and `/`, and up to two
 * trailing `=` dropped (undici and the web platform tests accept a digest with or without padding).
 */
function canonical(digest: string): string {
  let end = digest.length;
  for (let i = 0; i < 2 && end > 0 && digest[end - 1] === '='; i++) end--;
  return digest.slice(0, end).replace(/[-_]/g, (c) => (c === '-' ? '+' : '/'));
}

/** Hashes a body as it arrives; `matches()` once it is whole. */
class IntegrityCheck {
  readonly #hash: Hash;
  readonly #digests: string[];

  constructor({ algorithm, digests }: Strongest) {
    this.#hash = createHash(algorithm);
    this.#digests = digests.map(canonical);
  }

  update(chunk: Uint8Array): void {
    this.#hash.update(chunk);
  }

  /** Whether the body fed so far matches one of the digests (call once, at the body's end). */
  matches(): boolean {
    const actual = canonical(this.#hash.digest('base64'));
    return this.#digests.includes(actual);
  }
}

/**
 * Fetch's integrity step: reads the whole body behind `handler` (null: the response has none) and
 * checks it against `metadata` before fetch resolves. Throws what fetch rejects with: undici's
 * TypeError('fetch failed') whose cause is Error('integrity mismatch'), the signal's reason after
 * an abort, or 'fetch failed' caused by the error that ended the body early.
 */
export async function verifyIntegrity(handler: FetchHandler | null, metadata: string, signal: AbortSignal | null): Promise<void> {
  // The Fetch standard fails a response without a body whatever the metadata says.
  if (handler === null) throw fetchFailed(new Error('integrity metadata given, but the response has no body to check'));
  const strongest = strongestMetadata(metadata);
  const check = strongest === null ? null : new IntegrityCheck(strongest);
  try {
    await handler.readWhole(check === null ? noop : (chunk) => check.update(chunk));
  } catch (err) {
    throw signal !== null && signal.aborted ? abortReason(signal) : fetchFailed(err);
  }
  if (check !== null && !check.matches()) throw fetchFailed(new Error('integrity mismatch'));
}

function noop(): void {}
