// The bridged transport's JS side (DESIGN §3): for a pool whose connections are Node sockets (a
// custom `connect` function, or options only Node's net / tls honour), each BRIDGE_OPEN event
// calls the connector, and the socket it returns is wired to the engine, which runs HTTP over it.
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { bridge } from '../native/engine.js';
import type { BridgeSink } from '../native/events.js';
import { holdUserError, releaseUserError, USER_ERROR } from '../native/error-codes.js';
import { buildConnector, connectorOptions, type Connector, type ConnectorBuildOptions, type ConnectorOptions, type ConnectFunction } from '../core/connector.js';
import { InvalidArgumentError, NotSupportedError } from '../core/errors.js';
import { libDebug } from '../core/debug.js';
import { clientCertRefusal, nodeOnlyOption } from './tls-options.js';

type Options = Record<string, unknown>;

export interface ConnectorPlan {
  /** Options whose top-level TLS and socket settings apply: the client's, or none for a buildConnector result. */
  base: Options;
  /** The `connect` options the native path serves. */
  connect: Options;
  /** Set when connections are Node sockets made by this function. */
  bridged: Connector | null;
  /** The engine runs TLS over the bridged sockets (`connect` holds its options). */
  engineTls?: boolean;
}

const kStreamTls = Symbol('ferro.streamTls');

/**
 * Marks `connect` as making plain byte streams (a proxy's tunnel): for an https origin the engine
 * runs its own TLS over them with the Node-style options `tls`, unless those need Node's TLS.
 */
export function tunnelConnector(connect: ConnectFunction, tls: Options): Connector {
  const marked: Connector = (opts, cb) => {
    connect(opts, cb);
    return undefined;
  };
  Object.defineProperty(marked, kStreamTls, { value: tls });
  return marked;
}

/**
 * Whether connections with these (merged) options need Node's sockets: an option only Node honours,
 * or a client certificate the engine's TLS refuses but Node's takes (said once on NODE_DEBUG=lib).
 */
function needsNode(o: Options, origin: URL): boolean {
  const https = origin.protocol === 'https:';
  if (nodeOnlyOption(o, https) !== undefined) return true;
  const refusal = https ? clientCertRefusal(o) : undefined;
  if (refusal === undefined) return false;
  libDebug?.(`${origin.origin} uses Node's TLS: ferro's TLS cannot use the client certificate - ${refusal}`);
  return true;
}

function tunnelPlan(c: Connector, tls: Options, opts: Options, origin: URL): ConnectorPlan {
  if (origin.protocol !== 'https:') return { base: opts, connect: {}, bridged: c };
  if (!needsNode(tls, origin)) return { base: opts, connect: tls, bridged: c, engineTls: true };
  // Options only OpenSSL honours: Node's TLS over the stream, the engine's HTTP over that.
  const overStream = buildConnector({ ...(tls as ConnectorBuildOptions), timeout: 0 });
  const layered: Connector = (target, cb) =>
    c(target, (err, socket) => {
      if (err != null || socket == null) cb(err ?? new InvalidArgumentError('connect must call back with an error or a socket'));
      else overStream({ ...target, httpSocket: socket }, cb);
    });
  return { base: opts, connect: {}, bridged: layered };
}

/** How a client with these options connects: natively, or over Node sockets from a connector. */
export function planConnector(origin: URL, opts: Options): ConnectorPlan {
  const c = opts.connect;
  if (c != null && typeof c !== 'object' && typeof c !== 'function') {
    throw new InvalidArgumentError('connect must be a function or an object');
  }
  if (typeof c === 'function') {
    const streamTls = (c as { [kStreamTls]?: Options })[kStreamTls];
    if (streamTls !== undefined) return tunnelPlan(c as Connector, streamTls, opts, origin);
    const built = connectorOptions(c) as Options | undefined;
    if (built === undefined) return { base: opts, connect: {}, bridged: c as Connector };
    // A buildConnector result as it is: its own options only, none of the client's (as in undici).
    return { base: {}, connect: built, bridged: needsNode(built, origin) ? (c as Connector) : null };
  }
  const connect = (c ?? {}) as Options;
  const tlsOpts = typeof opts.tls === 'object' && opts.tls !== null ? (opts.tls as Options) : {};
  const merged = { ...tlsOpts, localAddress: opts.localAddress, ...connect };
  if (!needsNode(merged, origin)) return { base: opts, connect, bridged: null };
  const built = buildConnector({
    ...tlsOpts,
    maxCachedSessions: opts.maxCachedSessions as number | null | undefined,
    // The client's default, as undici's Client passes it to its connector.
    allowH2: (opts.allowH2 as boolean | null | undefined) ?? true,
    ...connect,
    // The same precedence as the native path's options (engine-dispatcher.ts).
    socketPath: (opts.socketPath ?? connect.socketPath) as string | null | undefined,
    timeout: (opts.connectTimeout ?? connect.timeout) as number | null | undefined,
  });
  return { base: opts, connect, bridged: built };
}

const ERRNO = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** One bridged socket, from BRIDGE_OPEN until the engine or the pool is done with it. */
class Link implements BridgeSink {
  readonly id: number;
  readonly #owner: Bridge;
  #socket: Socket | null = null;
  #closed = false;

  constructor(id: number, owner: Bridge) {
    this.id = id;
    this.#owner = owner;
  }

  /** The connector's socket is connected: hand it to the engine. */
  attach(socket: Socket): void {
    if (this.#closed) {
      // The engine stopped waiting (connect timeout) or the pool went away.
      socket.destroy();
      return;
    }
    const tls = (socket as TLSSocket).encrypted === true;
    // "|tls|h2" tells the engine to run an HTTP/2 session over this socket.
    const alpn = tls ? (socket as TLSSocket).alpnProtocol || '' : '';
    const addrs =
      `${socket.localAddress ?? ''}|${socket.localPort ?? ''}|${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}` +
      (tls ? `|tls|${alpn}` : '');
    if (!bridge.attach(this.id, addrs)) {
      socket.destroy();
      this.close();
      return;
    }
    this.#socket = socket;
    const id = this.id;
    socket.on('data', (chunk: Buffer | string) => {
      // A socket with an encoding set hands out strings.
      if (!bridge.data(id, typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) socket.pause();
    });
    socket.on('end', () => bridge.end(id));
    socket.on('error', (err: Error) => bridge.error(id, ERRNO(err), err?.message ?? String(err)));
    socket.on('close', () => bridge.end(id));
    socket.on('drain', () => bridge.writable(id, true));
    // Whether the process stays up is the engine's call (referenced while requests are in
    // flight), as for its own sockets: an idle kept-alive socket must not hold the process.
    if (typeof socket.unref === 'function') socket.unref();
    if (socket.destroyed || socket.readableEnded) bridge.end(id);
    else socket.resume();
  }

  /** The connector failed: the engine fails the connection attempt with `err` itself. */
  fail(err: unknown): void {
    if (this.#closed) return;
    const key = holdUserError(err);
    if (bridge.fail(this.id, USER_ERROR, ERRNO(err), key)) this.#owner.held.add(key);
    else {
      releaseUserError(key);
      this.close();
    }
  }

  onBridgeWrite(chunk: Buffer): void {
    const s = this.#socket;
    if (s === null || s.destroyed) return;
    if (!s.write(chunk)) bridge.writable(this.id, false);
  }

  onBridgeEnd(): void {
    this.#socket?.end();
  }

  onBridgeDrain(): void {
    const s = this.#socket;
    if (s !== null && !s.destroyed) s.resume();
  }

  onBridgeClose(): void {
    this.close(true);
  }

  /** `graceful`: what the engine wrote still goes out first (its own sockets flush before closing too). */
  close(graceful = false): void {
    if (this.#closed) return;
    this.#closed = true;
    bridge.forget(this.id);
    this.#owner.links.delete(this);
    const s = this.#socket;
    if (s === null || s.destroyed) return;
    if (graceful && s.writableLength > 0) {
      if (!s.writableEnded) s.end();
      s.once('finish', () => s.destroy());
      // A peer that never reads must not keep it forever.
      setTimeout(() => s.destroy(), 5000).unref();
    } else {
      s.destroy();
    }
  }
}

/** The bridged connections of one pool. */
export class Bridge {
  readonly #connect: Connector;
  readonly #target: ConnectorOptions;
  readonly links = new Set<Link>();
  /** Keys of user errors the engine still carries (error-codes.ts). */
  readonly held = new Set<string>();
  #destroyed = false;

  constructor(origin: URL, connect: Connector, localAddress: string | null) {
    this.#connect = connect;
    // What undici's client passes a connector: the hostname without IPv6 brackets, the port as
    // written in the origin ('' for the default).
    this.#target = {
      host: origin.host,
      hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
      protocol: origin.protocol,
      port: origin.port,
      localAddress,
    };
  }

  /** BRIDGE_OPEN: the engine needs a connection for bridge `id`. */
  open(id: number): void {
    const link = new Link(id, this);
    bridge.register(id, link);
    this.links.add(link);
    if (this.#destroyed) {
      link.close();
      return;
    }
    let called = false;
    const callback = (err: Error | null, socket?: Socket | null): void => {
      if (called) return;
      called = true;
      if (err != null) link.fail(err);
      else if (socket == null || typeof (socket as Partial<Socket>).write !== 'function') {
        link.fail(new InvalidArgumentError('connect must call back with an error or a socket'));
      } else link.attach(socket);
    };
    try {
      this.#connect({ ...this.#target }, callback);
    } catch (err) {
      callback(err as Error);
    }
  }

  /** The engine delivered a connect failure carrying `key`; its requests' errors come in the same batch. */
  delivered(key: string): void {
    if (!this.held.delete(key)) return;
    setImmediate(() => releaseUserError(key));
  }

  destroy(): void {
    this.#destroyed = true;
    for (const link of [...this.links]) link.close();
    for (const key of this.held) releaseUserError(key);
    this.held.clear();
  }
}
