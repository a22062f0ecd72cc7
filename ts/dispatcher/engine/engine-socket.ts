// The socket handed out by upgrade / CONNECT: a Duplex over the engine's connection, which has
// become a byte tunnel. Writes go through the request's engine pipe (with drain backpressure),
// reads arrive as the request's DATA events, `end()` half-closes, `destroy()` closes. The server's
// end ends our side too (allowHalfOpen false), as a net.Socket's default and undici's socket do.
import { Duplex } from 'node:stream';
import { closeRequest, control, routeRequest } from '../../native/engine.js';
import { parseAddrs } from '../../native/addrs.js';
import { engineError } from '../../native/error-codes.js';
import type { RequestSink } from '../../native/events.js';

/**
 * Set (true) on a WebSocket handshake's dispatch options: the engine holds the upgraded connection
 * for its WebSocket session (`startWebSocket`) instead of tunnelling its bytes.
 */
export const kWebSocketSession: unique symbol = Symbol('ferro.webSocketSession');

/** How a WebSocket session is started on the socket (ts/websocket/connection.ts). */
interface WebSocketStart {
  extensions: string;
  maxPayloadSize: number;
  maxFragments: number;
  stalledWriteTimeout: number;
}

export class EngineSocket extends Duplex implements RequestSink {
  readonly #id: number;
  #paused = false;
  #pendingWrite: ((err?: Error | null) => void) | null = null;
  #closed = false;
  #timeout = 0;
  #timer: NodeJS.Timeout | null = null;
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly remoteFamily: string | undefined;
  readonly alpnProtocol: string | false;
  readonly encrypted: boolean;

  /** `addrs`: the engine's description of the connection's endpoints (ts/native/addrs.ts). */
  /** `held`: dispatched with kWebSocketSession; the engine reads nothing until told how to go on. */
  constructor(id: number, addrs: string, held = false) {
    super({ allowHalfOpen: false });
    this.#id = id;
    this.#paused = held;
    const a = parseAddrs(addrs);
    this.localAddress = a.localAddress;
    this.localPort = a.localPort;
    this.remoteAddress = a.remoteAddress;
    this.remotePort = a.remotePort;
    this.remoteFamily = a.remoteFamily;
    this.encrypted = a.encrypted;
    this.alpnProtocol = a.alpnProtocol;
  }

  /**
   * Hands the connection to the engine's WebSocket session, whose events go to `sink` from now on;
   * this socket is done with it. Returns the engine request the session runs as (0: the
   * connection is already gone); throws when the engine refuses `start.extensions`.
   */
  startWebSocket(sink: RequestSink, start: WebSocketStart): number {
    const { extensions, maxPayloadSize, maxFragments, stalledWriteTimeout } = start;
    if (this.#closed) return 0;
    if (!control.wsStart(this.#id, extensions, maxPayloadSize, maxFragments, stalledWriteTimeout)) return 0;
    routeRequest(this.#id, sink);
    // The request is the session's now: destroying this socket must not abort it.
    this.#closed = true;
    this.destroy();
    return this.#id;
  }

  /** Bytes from the server. */
  onEngineData(chunk: Buffer): void {
    this.#touch();
    if (!this.push(chunk) && !this.#paused) {
      this.#paused = true;
      control.pause(this.#id);
    }
  }

  /** The server closed its side. */
  onEngineEnd(): void {
    this.push(null);
  }

  onEngineError(code: number, errno: string, message: string, socket: string): void {
    this.destroy(engineError(code, errno, message, socket));
  }

  /** The tunnel has room for more of what is written. */
  onEngineBodyDrain(): void {
    const cb = this.#pendingWrite;
    this.#pendingWrite = null;
    cb?.();
  }

  // A tunnel carries no more HTTP: these events belong to the request it was.
  onEngineHead(): void {}
  onEngineUpgrade(): void {}
  onEngineRetry(): void {}

  override _read(): void {
    if (this.#paused) {
      this.#paused = false;
      control.resume(this.#id);
    }
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.#touch();
    if (control.write(this.#id, chunk)) cb();
    else this.#pendingWrite = cb;
  }

  override _final(cb: (err?: Error | null) => void): void {
    control.end(this.#id);
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.#release();
    cb(err);
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    // Closes the tunnel if it is still open; a no-op once the engine finished with it.
    control.abort(this.#id);
    closeRequest(this.#id);
  }

  #touch(): void {
    if (this.#timer !== null) this.#timer.refresh();
  }

  // net.Socket members people use on upgraded sockets. The engine already disables Nagle.
  setNoDelay(_noDelay?: boolean): this {
    return this;
  }
  setKeepAlive(_enable?: boolean, _initialDelay?: number): this {
    return this;
  }
  /** Emits 'timeout' after `ms` without activity, as net.Socket does (0 disables). */
  setTimeout(ms: number, callback?: () => void): this {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timeout = ms;
    if (callback) this.once('timeout', callback);
    if (ms > 0) this.#timer = setTimeout(() => this.emit('timeout'), ms).unref();
    return this;
  }
  get timeout(): number {
    return this.#timeout;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}
