// HTTP/3 settings (`allowH3` and `h3Options`), validated at construction and handed to the engine
// with the pool's configuration (src/binding.rs `h3_options`). HTTP/3 runs over QUIC with TLS
// 1.3, so only https: origins use it; the engine's TLS options apply to it as to TCP.
import { InvalidArgumentError } from '../../core/errors.js';
import type { PoolConfig } from '../../native/binding.js';

export interface H3Options {
  /** Straight to HTTP/3 on the origin's host and port, no TCP and no fallback (default false). */
  priorKnowledge?: boolean;
  /** Requests open at once on one HTTP/3 connection (the server's stream limit applies too); default 100. */
  maxConcurrentStreams?: number;
  /** ms of silence after which QUIC closes the connection (default 30000; keep-alives go at a third). */
  idleTimeout?: number;
  /** QUIC flow control: the connection's receive window in bytes (default 4 MiB). */
  initialMaxData?: number;
  /** QUIC flow control: each stream's receive window in bytes (default 1 MiB). */
  initialMaxStreamData?: number;
  /** ms an Alt-Svc endpoint has to answer before the request goes over TCP instead (default 300). */
  fallbackTimeout?: number;
  /**
   * Resumed connections send requests in TLS early data (0-RTT) before the handshake completes
   * (default false). Only safe requests without a body (GET, HEAD, OPTIONS, TRACE) go early, since
   * early data can be replayed by an attacker; a 425 (Too Early) to one is retried once after the
   * handshake, unseen.
   */
  zeroRtt?: boolean;
}

/** The pool configuration's HTTP/3 fields. */
type H3PoolConfig = Pick<
  PoolConfig,
  'allowH3' | 'h3PriorKnowledge' | 'h3MaxConcurrentStreams' | 'h3IdleTimeout' | 'h3InitialMaxData' | 'h3InitialMaxStreamData' | 'h3Race' | 'h3ZeroRtt'
>;

const U32 = 2 ** 32 - 1;

function integer(value: unknown, name: string, def: number, min: number, max: number): number {
  if (value == null) return def;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`h3Options.${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** Checks `allowH3` / `h3Options`; the engine's fields when `origin` may use HTTP/3, else none. */
export function h3PoolConfig(opts: Record<string, unknown>, origin: URL): H3PoolConfig {
  const { allowH3, h3Options } = opts;
  if (allowH3 != null && typeof allowH3 !== 'boolean') throw new InvalidArgumentError('allowH3 must be a valid boolean value');
  if (h3Options != null && typeof h3Options !== 'object') throw new InvalidArgumentError('h3Options must be an object');
  const o = (h3Options ?? {}) as H3Options;
  for (const name of ['priorKnowledge', 'zeroRtt'] as const) {
    if (o[name] != null && typeof o[name] !== 'boolean') throw new InvalidArgumentError(`h3Options.${name} must be a valid boolean value`);
  }
  const config: H3PoolConfig = {
    allowH3: true,
    h3PriorKnowledge: o.priorKnowledge === true,
    h3MaxConcurrentStreams: integer(o.maxConcurrentStreams, 'maxConcurrentStreams', 100, 1, 2 ** 31 - 1),
    h3IdleTimeout: integer(o.idleTimeout, 'idleTimeout', 30e3, 0, U32),
    // QUIC's windows are varints; the engine takes them as 32-bit numbers.
    h3InitialMaxData: integer(o.initialMaxData, 'initialMaxData', 4 * 2 ** 20, 1, U32),
    h3InitialMaxStreamData: integer(o.initialMaxStreamData, 'initialMaxStreamData', 2 ** 20, 1, U32),
    h3Race: integer(o.fallbackTimeout, 'fallbackTimeout', 300, 1, U32),
    h3ZeroRtt: o.zeroRtt === true,
  };
  if (allowH3 !== true) return {};
  if (origin.protocol !== 'https:') {
    if (config.h3PriorKnowledge) throw new InvalidArgumentError('h3Options.priorKnowledge needs an https: origin (HTTP/3 is always encrypted)');
    return {};
  }
  return config;
}
