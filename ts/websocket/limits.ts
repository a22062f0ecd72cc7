// What a WebSocket connection accepts from a server before failing it: the largest message, the
// most fragments per message (undici's `webSocket` dispatcher options, same names and defaults,
// read from the engine), and how long the server may leave our frames unread while we wait.
import { binding } from '../native/binding.js';

/** undici's `Client.WebSocketOptions`, plus ferro's `stalledWriteTimeout`. */
export interface WebSocketOptions {
  /** Most frames one message may come in; more fail the connection with 1008. 0: no limit. */
  maxFragments?: number;
  /**
   * Largest message in bytes, compressed frames and the decompressed message alike; larger ones
   * fail the connection with 1009. 0: no limit.
   */
  maxPayloadSize?: number;
  /**
   * ferro: ms the server may leave our frames unread, with reading paused for them, before the
   * connection fails with 1008. 0: wait for ever (undici's behaviour).
   */
  stalledWriteTimeout?: number;
}

export type WebSocketLimits = Required<WebSocketOptions>;

interface LimitsBinding {
  websocketDefaultLimits(): { maxPayloadSize: number; maxFragments: number };
}

const engineDefaults = (binding as unknown as LimitsBinding).websocketDefaultLimits();

/** Same as the closing handshake's timeout: a server that takes nothing for that long is gone. */
const DEFAULT_STALLED_WRITE_TIMEOUT_MS = 30_000;

export const DEFAULT_LIMITS: Readonly<WebSocketLimits> = Object.freeze({
  maxFragments: engineDefaults.maxFragments,
  maxPayloadSize: engineDefaults.maxPayloadSize,
  stalledWriteTimeout: DEFAULT_STALLED_WRITE_TIMEOUT_MS,
});

function limit(value: unknown, name: string, fallback: number, fail: (message: string) => Error): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw fail(`${name} must be a non-negative number`);
  }
  return Math.floor(value);
}

/**
 * The limits for one connection: each of `own` (the WebSocket's options) wins over the
 * dispatcher's, which win over the defaults. `fail` makes the error a bad value throws.
 */
export function resolveLimits(
  own: WebSocketOptions | null | undefined,
  base: WebSocketOptions | null | undefined,
  fail: (message: string) => Error,
): WebSocketLimits {
  const from = (key: keyof WebSocketOptions): number =>
    limit(own?.[key], key, limit(base?.[key], key, DEFAULT_LIMITS[key], fail), fail);
  return { maxFragments: from('maxFragments'), maxPayloadSize: from('maxPayloadSize'), stalledWriteTimeout: from('stalledWriteTimeout') };
}

/** The `webSocketOptions` a dispatcher offers (undici's getter; wrappers forward it), if any. */
export function dispatcherLimits(dispatcher: unknown): WebSocketOptions | null {
  if (dispatcher === null || typeof dispatcher !== 'object') return null;
  const opts = (dispatcher as { webSocketOptions?: unknown }).webSocketOptions;
  return opts !== null && typeof opts === 'object' ? (opts as WebSocketOptions) : null;
}
