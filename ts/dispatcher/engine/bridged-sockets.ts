// The bridged transport's JS side (DESIGN §3): for a pool whose connections are Node sockets (a
// custom `connect` function, or options only Node's net / tls honour), each BRIDGE_OPEN event
// calls the connector, and the socket it returns is wired to the engine, which runs HTTP over it.
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { bridge, type BridgeCalls } from '../../native/engine.js';
import type { BridgeSink } from '../../native/events.js';
import { ErrorCode, holdUserError, releaseUserError, USER_ERROR } from '../../native/error-codes.js';
import { serverNameOf, type Connector, type ConnectorOptions } from '../../core/connector.js';
import { InvalidArgumentError } from '../../core/errors.js';

/** What undici's util.isStream accepts: a stream-shaped object. */
const isStream = (x: unknown): x is Socket =>
  x !== null && typeof x === 'object' && typeof (x as Socket).pipe === 'function' && typeof (x as Socket).on === 'function';

const ERRNO = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** One bridged socket, from BRIDGE_OPEN until the engine or the pool is done with it. */
class Link implements BridgeSink {
  readonly id: number;
  readonly #owner: Bridge;
  readonly #calls: BridgeCalls;
  #socket: Socket | null = null;
  #closed = false;
  /** The socket the connector returned before it called back: what cancels the attempt. */
  returned: Socket | null = null;

  constructor(id: number, owner: Bridge, calls: BridgeCalls) {
    this.id = id;
    this.#owner = owner;
    this.#calls = calls;
  }

  /** The connector's socket is connected: hand it to the engine. */
  attach(socket: Socket): void {
    this.returned = null;
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
    if (!this.#calls.attach(this.id, addrs)) {
      socket.destroy();
      this.close();
      return;
    }
    this.#socket = socket;
    const id = this.id;
    socket.on('data', (chunk: Buffer | string) => {
      // A socket with an encoding set hands out strings.
      if (!this.#calls.data(id, typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) socket.pause();
    });
    socket.on('end', () => this.#calls.end(id));
    socket.on('error', (err: Error) => this.#calls.error(id, ERRNO(err), err?.message ?? String(err)));
    socket.on('close', () => this.#calls.end(id));
    socket.on('drain', () => this.#calls.writable(id, true));
    // Whether the process stays up is the engine's call (referenced while requests are in
    // flight), as for its own sockets: an idle kept-alive socket must not hold the process.
    if (typeof socket.unref === 'function') socket.unref();
    if (socket.destroyed || socket.readableEnded) this.#calls.end(id);
    else socket.resume();
  }

  /** The connector failed: the engine fails the connection attempt with `err` itself. */
  fail(err: unknown): void {
    this.returned = null;
    if (this.#closed) return;
    const key = holdUserError(err);
    if (this.#calls.fail(this.id, USER_ERROR, ERRNO(err), key)) this.#owner.held.add(key);
    else {
      releaseUserError(key);
      this.close();
    }
  }

  /**
   * No request waits for this attempt any more (undici's cancelled connect): the socket the
   * connector returned is destroyed, and the engine gives the attempt up without failing anything.
   */
  cancel(): void {
    const socket = this.returned;
    this.returned = null;
    if (socket === null || this.#closed) return;
    socket.on('error', () => {});
    socket.destroy();
    this.#calls.fail(this.id, ErrorCode.Info, '', 'no request waits for this connection');
    this.close();
  }

  onBridgeWrite(chunk: Buffer): void {
    const s = this.#socket;
    if (s === null || s.destroyed) return;
    if (!s.write(chunk)) this.#calls.writable(this.id, false);
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
    this.#calls.forget(this.id);
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
    // written in the origin ('' for the default), the TLS name (none for an IP literal).
    this.#target = {
      host: origin.host,
      hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
      protocol: origin.protocol,
      port: origin.port,
      servername: serverNameOf(origin.host),
      localAddress,
    };
  }

  /**
   * The connections are for another TLS name now (a request's own `servername`): the sockets made
   * for the last one go, and the connector is asked for sockets for `name`.
   */
  switchName(name: string): void {
    this.#target.servername = serverNameOf(name);
    for (const link of [...this.links]) link.close();
  }

  /** BRIDGE_OPEN: the engine needs a connection for bridge `id`. */
  open(id: number): void {
    const calls = bridge.current();
    const link = new Link(id, this, calls);
    calls.register(id, link);
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
      const returned: unknown = this.#connect({ ...this.#target }, callback);
      // undici 8.13: a connector may return its socket, so the attempt can be cancelled.
      if (!called && isStream(returned)) link.returned = returned;
    } catch (err) {
      callback(err as Error);
    }
  }

  /** Nothing waits for a connection: attempts whose connector returned its socket are given up. */
  cancelUnused(): void {
    for (const link of [...this.links]) link.cancel();
  }

  /** The engine reported a failed connection; a user error's key is released after this batch. */
  connectFailed(code: number, message: string): void {
    if (code !== USER_ERROR) return;
    // The requests' errors carrying this key come in the same batch.
    const key = message;
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

/** BRIDGE_OPEN for a pool that has no connector: cannot happen; fail it rather than hang. */
export function refuseBridge(id: number): void {
  bridge.current().fail(id, ErrorCode.Internal, '', 'no connector for a bridged connection');
}
