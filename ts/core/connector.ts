// buildConnector: a connector function that makes real Node sockets (net or tls), usable on its
// own or as a Client's `connect` option. The function carries its options, so a Client given it
// unwrapped can serve the same options on the engine's native path instead (dispatcher/engine/connector-plan.ts).
import * as net from 'node:net';
import * as tls from 'node:tls';
// Sockets are made through the module objects, not the ESM namespaces (a snapshot), so a library
// that replaces net.connect / tls.connect (mitm-style test doubles) sees them, as with undici.
import netModule from 'node:net';
import tlsModule from 'node:tls';
import { ConnectTimeoutError, InvalidArgumentError } from './errors.js';

/** Every `tls.connect` / `net.connect` option, plus undici's own. */
export interface ConnectorBuildOptions extends Omit<tls.ConnectionOptions, 'timeout'> {
  socketPath?: string | null;
  /** Only with allowH2: offer h2 first. */
  preferH2?: boolean | null;
  allowH2?: boolean | null;
  /** TLS sessions kept for resumption; 0 disables the cache. Default 100. */
  maxCachedSessions?: number | null;
  /** Connect timeout in ms (TLS handshake included); 0 disables. Default 10 s. */
  timeout?: number | null;
  servername?: string;
  keepAlive?: boolean | null;
  keepAliveInitialDelay?: number | null;
  localAddress?: string | null;
  // net.connect's TCP options, passed on as they are (a Client given them uses Node's sockets).
  localPort?: number;
  family?: number;
  autoSelectFamily?: boolean;
  autoSelectFamilyAttemptTimeout?: number;
}

/** What a Client passes to a connector for each connection. */
export interface ConnectorOptions {
  hostname: string;
  host?: string;
  protocol: string;
  port: string;
  servername?: string;
  localAddress?: string | null;
  /** Overrides the connector's own socketPath for this connection. */
  socketPath?: string | null;
  /** TLS on top of this socket instead of a new one. */
  httpSocket?: net.Socket;
}

/** `(null, socket)` once connected, or `(error)`. */
export type ConnectorCallback = (err: Error | null, socket?: net.Socket | tls.TLSSocket | null) => void;
export type Connector = (opts: ConnectorOptions, callback: ConnectorCallback) => net.Socket | tls.TLSSocket | undefined;
/** What a Client's `connect` option may be: any function with a connector's signature. */
export type ConnectFunction = (opts: ConnectorOptions, callback: ConnectorCallback) => unknown;

const kOptions = Symbol('ferro.connectorOptions');

/** The options a `buildConnector` result was made with; undefined for any other function. */
export function connectorOptions(fn: unknown): ConnectorBuildOptions | undefined {
  return typeof fn === 'function' ? (fn as { [kOptions]?: ConnectorBuildOptions })[kOptions] : undefined;
}

/** Least-recently-used TLS sessions, by server name (or host). */
class SessionCache {
  readonly #max: number;
  readonly #sessions = new Map<string, Buffer>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string): Buffer | undefined {
    const s = this.#sessions.get(key);
    if (s !== undefined) {
      // Map order is insertion order: re-inserting marks it most recent.
      this.#sessions.delete(key);
      this.#sessions.set(key, s);
    }
    return s;
  }

  set(key: string, session: Buffer): void {
    if (this.#max === 0) return;
    this.#sessions.delete(key);
    this.#sessions.set(key, session);
    while (this.#sessions.size > this.#max) {
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    }
  }
}

/** The SNI name for a Host value ("name:port", "[v6]:port"): none for IP literals, as Node forbids them. */
export function serverNameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  let name = host;
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    name = end === -1 ? name.slice(1) : name.slice(1, end);
  } else {
    const colon = name.lastIndexOf(':');
    if (colon !== -1 && name.indexOf(':') === colon) name = name.slice(0, colon);
  }
  return name === '' || net.isIP(name) !== 0 ? undefined : name;
}

function optionalNumber(v: unknown, name: string): number | undefined {
  if (v == null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InvalidArgumentError(`${name} must be a positive number or zero`);
  return v;
}

/**
 * Fails `socket` with ConnectTimeoutError unless it connects within `ms`. The deadline is checked
 * again one event-loop turn later, so a connect event already waiting behind a busy loop still wins.
 */
function connectTimer(socket: net.Socket, ms: number, address: string): () => void {
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(() => {
      socket.destroy(new ConnectTimeoutError(`Connect Timeout Error (attempted address: ${address}, timeout: ${ms}ms)`));
    });
  }, ms);
  timer.unref();
  return () => {
    clearTimeout(timer);
    if (immediate !== undefined) clearImmediate(immediate);
  };
}

/** undici's type names: `buildConnector.BuildOptions`, `.Options`, `.Callback`, `.connector`. */
export declare namespace buildConnector {
  export type BuildOptions = ConnectorBuildOptions;
  export type Options = ConnectorOptions;
  export type Callback = ConnectorCallback;
  export type connector = Connector;
}

export function buildConnector(options: ConnectorBuildOptions = {}): Connector {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  const { socketPath, timeout, maxCachedSessions, allowH2, preferH2, session, servername, keepAlive, keepAliveInitialDelay, ...rest } =
    options;
  const maxSessions = maxCachedSessions ?? 100;
  if (!Number.isInteger(maxSessions) || maxSessions < 0) {
    throw new InvalidArgumentError('maxCachedSessions must be a positive integer or zero');
  }
  if (allowH2 != null && typeof allowH2 !== 'boolean') throw new InvalidArgumentError('allowH2 must be a valid boolean value');
  if (socketPath != null && typeof socketPath !== 'string') throw new InvalidArgumentError('invalid socketPath');
  const connectTimeout = optionalNumber(timeout, 'timeout') ?? 10e3;
  const keepAliveDelay = optionalNumber(keepAliveInitialDelay, 'keepAliveInitialDelay') ?? 60e3;
  const alpn = allowH2 === true ? (preferH2 === true ? ['h2', 'http/1.1'] : ['http/1.1', 'h2']) : ['http/1.1'];
  const sessions = new SessionCache(maxSessions);

  const connector: Connector = (opts, callback) => {
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('connector options must be an object');
    if (typeof callback !== 'function') throw new InvalidArgumentError('callback must be a function');
    const { hostname, host, protocol, port, localAddress, httpSocket } = opts;
    const path = opts.socketPath ?? socketPath;
    const address = path ?? `${hostname}:${port || (protocol === 'https:' ? 443 : 80)}`;
    let socket: net.Socket;
    if (protocol === 'https:') {
      const name = opts.servername || servername || serverNameOf(host ?? hostname);
      const key = name || hostname;
      socket = tlsModule.connect({
        highWaterMark: 16384,
        ...rest,
        servername: name,
        session: session ?? sessions.get(key),
        localAddress: localAddress ?? rest.localAddress ?? undefined,
        ALPNProtocols: alpn,
        socket: httpSocket,
        port: Number(port) || 443,
        host: hostname,
        ...(path != null ? { path } : null),
      } as tls.ConnectionOptions);
      socket.on('session', (s: Buffer) => sessions.set(key, s));
    } else {
      if (httpSocket != null) {
        throw new InvalidArgumentError('httpSocket can only be sent on TLS update');
      }
      socket = netModule.connect({
        highWaterMark: 64 * 1024,
        ...(rest as net.TcpNetConnectOpts),
        localAddress: localAddress ?? rest.localAddress ?? undefined,
        port: Number(port) || 80,
        host: hostname,
        ...(path != null ? { path } : null),
      } as net.NetConnectOpts);
    }
    // As undici: TCP keep-alive probes unless turned off, and no Nagle delay.
    if (keepAlive == null || keepAlive) socket.setKeepAlive(true, keepAliveDelay);
    socket.setNoDelay(true);
    const clearTimer = connectTimeout > 0 ? connectTimer(socket, connectTimeout, address) : () => {};
    let cb: ConnectorCallback | null = callback;
    // A TLS socket given an existing socket may already be connected underneath: wait for TLS.
    socket.once(protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      clearTimer();
      const done = cb;
      cb = null;
      done?.(null, socket);
    });
    // Stays attached: a later error must not go unhandled before the caller adds its own listener.
    socket.on('error', (err: Error) => {
      clearTimer();
      const done = cb;
      cb = null;
      done?.(err, null);
    });
    return socket;
  };
  Object.defineProperty(connector, kOptions, { value: Object.freeze({ ...options }) });
  return connector;
}
