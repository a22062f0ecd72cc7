// HTTP/2 session settings (undici's `maxConcurrentStreams`, `initialWindowSize`,
// `connectionWindowSize`, `pingInterval`, and the same under `h2Options`, plus `useH2c`),
// validated at construction and handed to the engine with the pool's configuration.
import { InvalidArgumentError } from '../../core/errors.js';

export interface H2Options {
  /** Streams open at once on one session; the server's SETTINGS_MAX_CONCURRENT_STREAMS can lower it. */
  maxConcurrentStreams?: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE: the stream-level receive window. */
  initialWindowSize?: number;
  /** The connection-level receive window. */
  connectionWindowSize?: number;
  /** Milliseconds between keep-alive PING frames; 0 disables them. */
  pingInterval?: number;
  /** Speak HTTP/2 without TLS (prior knowledge) to `http:` origins. */
  useH2c?: boolean;
  settings?: { initialWindowSize?: number };
}

export interface H2PoolConfig {
  maxConcurrentStreams: number;
  initialWindowSize: number;
  connectionWindowSize: number;
  pingInterval: number;
  h2c: boolean;
}

// RFC 9113 §6.5.2 / §6.9.1: windows are at most 2^31 - 1; the initial window at least 0.
const MAX_WINDOW = 2 ** 31 - 1;

function integer(value: unknown, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value == null) return def;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** The h2 part of a Client / Pool's options: top-level (deprecated in undici) names and `h2Options`. */
export function h2PoolConfig(opts: Record<string, unknown>): H2PoolConfig {
  const h2 = opts.h2Options;
  if (h2 != null && typeof h2 !== 'object') throw new InvalidArgumentError('h2Options must be an object');
  const o = (h2 ?? {}) as H2Options;
  const settings = o.settings;
  if (settings != null && typeof settings !== 'object') throw new InvalidArgumentError('h2Options.settings must be an object');
  const useH2c = o.useH2c ?? opts.useH2c;
  if (useH2c != null && typeof useH2c !== 'boolean') throw new InvalidArgumentError('useH2c must be a valid boolean value');
  return {
    maxConcurrentStreams: integer(o.maxConcurrentStreams ?? opts.maxConcurrentStreams, 'maxConcurrentStreams', 100, 1, 2 ** 31 - 1),
    initialWindowSize: integer(
      settings?.initialWindowSize ?? opts.initialWindowSize,
      'initialWindowSize',
      256 * 1024,
      0,
      MAX_WINDOW,
    ),
    connectionWindowSize: integer(o.connectionWindowSize ?? opts.connectionWindowSize, 'connectionWindowSize', 512 * 1024, 1, MAX_WINDOW),
    pingInterval: integer(o.pingInterval ?? opts.pingInterval, 'pingInterval', 60e3, 0, 2 ** 32 - 1),
    h2c: useH2c === true,
  };
}
