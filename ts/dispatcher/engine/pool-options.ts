// Client and Pool options (undici's names), checked and turned into the engine pool's
// configuration plus the few settings the JS side keeps (timeouts, busy capacity, connector).
import { isIP } from 'node:net';
import type { PoolConfig } from '../../native/binding.js';
import type { ConnectFunction, Connector } from '../../core/connector.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { planConnector } from './connector-plan.js';
import { h2PoolConfig, type H2Options } from './h2-options.js';
import { h3PoolConfig, type H3Options } from './h3-options.js';
import { tlsConfig } from './tls-options.js';
import { kConnCap, type GlobalCap } from '../global-cap.js';
import type { WebSocketOptions } from '../../websocket/limits.js';
import type { EventSourceOptions } from '../../eventsource/eventsource-options.js';

export interface EngineDispatcherOptions {
  socketPath?: string | null;
  pipelining?: number;
  /** false: a body whose length differs from its content-length header is sent with a warning. */
  strictContentLength?: boolean;
  keepAliveTimeout?: number;
  keepAliveMaxTimeout?: number;
  keepAliveTimeoutThreshold?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
  /**
   * ferro: ms from a response's head after which a request() body nobody has started reading is
   * let go and its connection released (docs/memory.md); 0 turns it off. Default 30000.
   */
  unconsumedBodyTimeout?: number;
  connectTimeout?: number | null;
  maxHeaderSize?: number;
  maxResponseSize?: number;
  maxRequestsPerClient?: number;
  // Also every tls.connect option, for https origins (tls-options.ts).
  // A function (a custom connector, or buildConnector's result) makes the sockets (bridged-sockets.ts).
  connect?: ({ timeout?: number | null; socketPath?: string | null } & Record<string, unknown>) | ConnectFunction | null;
  /** Local address to connect from (served by Node's sockets). */
  localAddress?: string | null;
  /**
   * Happy eyeballs (RFC 8305). The engine always races the address families, 250 ms apart;
   * `false`, or an attempt timeout, connects through Node's sockets with these options instead.
   */
  autoSelectFamily?: boolean | null;
  /** Milliseconds before the next address family is tried (Node's net.connect option). */
  autoSelectFamilyAttemptTimeout?: number | null;
  tls?: Record<string, unknown> | null;
  allowH2?: boolean | null;
  maxCachedSessions?: number | null;
  /** HTTP/2 session settings (h2-options.ts); the top-level names are undici's deprecated ones. */
  h2Options?: H2Options | null;
  maxConcurrentStreams?: number;
  initialWindowSize?: number;
  connectionWindowSize?: number;
  pingInterval?: number;
  useH2c?: boolean;
  /**
   * HTTP/3 (ferro; undici has none): once an HTTPS response advertised it (`Alt-Svc: h3`), later
   * requests to the origin go over QUIC while the entry is fresh. Default false.
   */
  allowH3?: boolean | null;
  /** HTTP/3 settings (h3-options.ts); `priorKnowledge` skips TCP altogether. */
  h3Options?: H3Options | null;
  /** Limits of WebSocket connections made through this dispatcher (undici's option). */
  webSocket?: WebSocketOptions | null;
  /** Limits of EventSources made through this dispatcher (undici's option). */
  eventSource?: EventSourceOptions | null;
  /**
   * How the engine is driven (docs/performance/threads.md): `'inline'` on this thread's event loop,
   * `'threaded'` on a thread of its own. Default: `FERRO_ENGINE`, else chosen for the machine.
   */
  engine?: 'inline' | 'threaded';
}

/** What an engine dispatcher runs with: the pool's configuration and what stays on this side. */
export interface EngineSettings {
  pool: PoolConfig;
  headersTimeout: number;
  bodyTimeout: number;
  unconsumedBodyTimeout: number;
  strictContentLength: boolean;
  /** Requests in flight at which the dispatcher is busy (h1: connections × pipelining). */
  capacity: number;
  /** The same once a connection turns out to be an h2 session (connections × streams). */
  h2Capacity: number;
  /** The same for HTTP/3 connections. */
  h3Capacity: number;
  /** Set when connections are Node sockets from this connector (bridged-sockets.ts). */
  bridged: Connector | null;
  localAddress: string | null;
}

const DEFAULT_TIMEOUT = 300e3;

function optNumber(v: unknown, name: string, def: number, min = 0): number {
  if (v == null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
    throw new InvalidArgumentError(`invalid ${name}`);
  }
  return v;
}

function optInteger(v: unknown, name: string, def: number, min: number): number {
  const n = optNumber(v, name, def, min);
  if (!Number.isInteger(n)) throw new InvalidArgumentError(`invalid ${name}`);
  return n;
}

// Options undici 4 took and undici now refuses, each with the option that replaced it (undici's words).
const RETIRED_OPTIONS: readonly [string, string][] = [
  ['keepAlive', 'use pipelining=0 instead'],
  ['socketTimeout', 'use headersTimeout & bodyTimeout instead'],
  ['requestTimeout', 'use headersTimeout & bodyTimeout instead'],
  ['idleTimeout', 'use keepAliveTimeout instead'],
  ['maxKeepAliveTimeout', 'use keepAliveMaxTimeout instead'],
];

function checkRetiredOptions(opts: Record<string, unknown> | undefined): void {
  for (const [name, instead] of RETIRED_OPTIONS) {
    if (opts?.[name] !== undefined) throw new InvalidArgumentError(`unsupported ${name}, ${instead}`);
  }
}

/** Checks `opts` for a dispatcher of `connections` connections (0: no limit) to `origin`. */
export function engineSettings(origin: URL, opts: EngineDispatcherOptions, connections: number): EngineSettings {
  if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('invalid options');
  checkRetiredOptions(opts as Record<string, unknown>);
  // pipelining: 0 is undici's way to turn keep-alive off: one request per connection.
  const noKeepAlive = opts.pipelining === 0;
  const pipelining = noKeepAlive ? 1 : optNumber(opts.pipelining, 'pipelining', 1);
  if (opts.strictContentLength != null && typeof opts.strictContentLength !== 'boolean') {
    throw new InvalidArgumentError('invalid strictContentLength');
  }
  const headersTimeout = optNumber(opts.headersTimeout, 'headersTimeout', DEFAULT_TIMEOUT);
  const bodyTimeout = optNumber(opts.bodyTimeout, 'bodyTimeout', DEFAULT_TIMEOUT);
  const unconsumedBodyTimeout = optNumber(opts.unconsumedBodyTimeout, 'unconsumedBodyTimeout', 30e3);
  if (opts.autoSelectFamily != null && typeof opts.autoSelectFamily !== 'boolean') {
    throw new InvalidArgumentError('autoSelectFamily must be a boolean');
  }
  const attemptTimeout = opts.autoSelectFamilyAttemptTimeout;
  if (attemptTimeout != null && (!Number.isInteger(attemptTimeout) || attemptTimeout < -1)) {
    // undici's check and words.
    throw new InvalidArgumentError('autoSelectFamilyAttemptTimeout must be a positive number');
  }
  // `base`: the options whose TLS / socket settings apply (none for a buildConnector result).
  const { base, connect, bridged, engineTls } = planConnector(origin, opts as Record<string, unknown>);
  const socketPath = base.socketPath ?? connect.socketPath ?? null;
  if (socketPath != null && typeof socketPath !== 'string') throw new InvalidArgumentError('invalid socketPath');
  const tls = origin.protocol === 'https:' && (bridged === null || engineTls === true) ? tlsConfig(base, connect) : undefined;
  const connectTimeout = optNumber(base.connectTimeout ?? connect.timeout, 'connectTimeout', 10e3);
  const localAddress = opts.localAddress ?? null;
  if (localAddress !== null && (typeof localAddress !== 'string' || isIP(localAddress) === 0)) {
    throw new InvalidArgumentError('localAddress must be valid string IP address');
  }
  const maxResponseSize = opts.maxResponseSize == null ? -1 : optNumber(opts.maxResponseSize, 'maxResponseSize', -1, -1);
  const h2 = h2PoolConfig(opts as Record<string, unknown>);
  const h3Checked = h3PoolConfig(opts as Record<string, unknown>, origin);
  // QUIC is the engine's own UDP socket: never for connections a connector (or a proxy) makes.
  const h3 = bridged === null && tls !== undefined ? h3Checked : {};
  // Whether a connection may speak h2: then the first one's ALPN decides before more open (undici
  // 8.11's protocol probe). A bridged socket's ALPN is its connector's; `allowH2` says what it offers.
  const offersH2 = tls !== undefined ? tls.alpnProtocols?.includes('h2') === true : (opts.allowH2 ?? connect.allowH2) !== false;
  const protocolProbe = h2.h2c || h3.h3PriorKnowledge === true || (origin.protocol === 'https:' && offersH2);
  const pool: PoolConfig = {
    host: origin.hostname,
    port: Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80),
    socketPath: (socketPath as string | null) ?? undefined,
    connections,
    pipelining,
    connectTimeout,
    keepAliveTimeout: optNumber(opts.keepAliveTimeout, 'keepAliveTimeout', 4e3),
    keepAliveMaxTimeout: optNumber(opts.keepAliveMaxTimeout, 'keepAliveMaxTimeout', 600e3, 1),
    keepAliveTimeoutThreshold: optNumber(opts.keepAliveTimeoutThreshold, 'keepAliveTimeoutThreshold', 2e3),
    maxHeaderSize: optInteger(opts.maxHeaderSize, 'maxHeaderSize', 16384, 1),
    maxResponseSize,
    maxRequestsPerClient: noKeepAlive ? 1 : optNumber(opts.maxRequestsPerClient, 'maxRequestsPerClient', 0),
    tls,
    bridged: bridged !== null,
    // undici's connector turns TCP keep-alive on (60 s) unless `keepAlive: false`.
    tcpKeepAlive: connect.keepAlive === false ? -1 : optNumber(connect.keepAliveInitialDelay, 'keepAliveInitialDelay', 60e3),
    ...h2,
    ...h3,
    protocolProbe,
    // An Agent's maxGlobalConnections (global-cap.ts), handed down with its options.
    cap: (opts as { [kConnCap]?: GlobalCap })[kConnCap]?.native.id,
  };
  return {
    pool,
    headersTimeout,
    bodyTimeout,
    unconsumedBodyTimeout,
    strictContentLength: opts.strictContentLength !== false,
    capacity: connections === 0 ? Infinity : connections * Math.max(1, pipelining),
    h2Capacity: connections === 0 ? Infinity : connections * h2.maxConcurrentStreams,
    h3Capacity: connections === 0 ? Infinity : connections * (h3.h3MaxConcurrentStreams ?? 1),
    bridged,
    localAddress: localAddress as string | null,
  };
}
