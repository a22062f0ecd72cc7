// One WebSocket connection after the handshake: feeds socket bytes to the engine's codec, writes
// the frames it makes, keeps `bufferedAmount`, and runs the closing handshake to the final close.
// Both WebSocket and WebSocketStream sit on this.
import type { Duplex } from 'node:stream';
import { hasSubscribers, publish } from '../core/diagnostics.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { openHandshake } from './handshake.js';
import { createCodec, decodeEvents, type CodecSink, type NativeWebSocket } from './native.js';

export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;

/** How long to wait for the server to finish the closing handshake before dropping the socket. */
const CLOSE_TIMEOUT_MS = 30_000;


export interface CloseInfo {
  wasClean: boolean;
  code: number;
  reason: string;
}

export interface ConnectionHost {
  onOpen(protocol: string, extensions: string): void;
  onMessage(data: string | Buffer): void;
  onPing(data: Buffer): void;
  onPong(data: Buffer): void;
  /** Once, last. `error`: why the connection failed (then an error event precedes close). */
  onClose(info: CloseInfo, error: Error | null): void;
}

export interface ConnectionOptions {
  url: URL;
  protocols: string[];
  headers: HeadersInit | null | undefined;
  dispatcher: Dispatcher;
  /** Largest message accepted, in bytes (0: the engine's default). */
  maxMessageSize: number;
}

export class WebSocketConnection implements CodecSink {
  readyState = CONNECTING;
  bufferedAmount = 0;
  readonly #host: ConnectionHost;
  #socket: Duplex | null = null;
  #codec: NativeWebSocket | null = null;
  #abortHandshake: ((reason: Error) => void) | null;
  #received: { code: number; reason: string } | null = null;
  #error: Error | null = null;
  #timer: NodeJS.Timeout | null = null;
  readonly #maxMessageSize: number;
  readonly #url: string;

  constructor(opts: ConnectionOptions, host: ConnectionHost) {
    this.#host = host;
    this.#url = opts.url.href;
    this.#maxMessageSize = opts.maxMessageSize;
    this.#abortHandshake = openHandshake(opts, (err, result) => {
      this.#abortHandshake = null;
      if (err !== null || result === null) {
        // Never inside the constructor or close(): listeners are attached after those return.
        const why = err ?? new TypeError('WebSocket handshake failed');
        queueMicrotask(() => this.#closed(why));
        return;
      }
      if (this.readyState !== CONNECTING) {
        result.socket.destroy();
        return;
      }
      try {
        this.#codec = createCodec(result.extensions, this.#maxMessageSize);
      } catch (e) {
        result.socket.destroy();
        return this.#closed(new TypeError(`WebSocket handshake failed: ${(e as Error).message}`));
      }
      this.#attach(result.socket);
      this.readyState = OPEN;
      // The lib:websocket channels (and through them NODE_DEBUG=websocket's WEBSOCKET lines).
      if (hasSubscribers('websocket:open')) {
        const s = result.socket as { remoteAddress?: string; remotePort?: number; remoteFamily?: string };
        publish('websocket:open', {
          address: s.remoteAddress == null ? null : { address: s.remoteAddress, port: s.remotePort, family: s.remoteFamily },
          protocol: result.protocol,
          extensions: result.extensions,
          websocket: { url: this.#url },
        });
      }
      host.onOpen(result.protocol, result.extensions);
    });
  }

  #attach(socket: Duplex): void {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      const events = this.#codec?.feed(chunk) ?? null;
      if (events !== null) decodeEvents(events, this);
    });
    // The server finished: nothing more can come, so the connection is over.
    socket.on('end', () => socket.destroy());
    socket.on('error', (err: Error) => (this.#error ??= err));
    socket.on('close', () => this.#closed(null));
  }

  /**
   * The codec queued a frame carrying `amount` bytes of application data; `done` once written.
   * Frames queued in one tick go out as one socket write from a microtask: a handler answering a
   * batch of messages costs one write (and one engine wake-up) instead of one per message.
   */
  #queued(amount: number, done?: () => void): void {
    const socket = this.#socket;
    if (socket === null || socket.destroyed || socket.writableEnded) {
      this.#codec?.takeFrames();
      return done?.();
    }
    this.bufferedAmount += amount;
    this.#outAmount += amount;
    if (done !== undefined) (this.#outDone ??= []).push(done);
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flush);
    }
  }

  /** Application bytes and write callbacks of the frames not yet handed to the socket. */
  #outAmount = 0;
  #outDone: (() => void)[] | null = null;
  #flushQueued = false;

  /** Writes every queued frame, in order, as one buffer. */
  readonly #flush = (): void => {
    this.#flushQueued = false;
    const frames = this.#codec?.takeFrames() ?? null;
    const amount = this.#outAmount;
    const done = this.#outDone;
    this.#outAmount = 0;
    this.#outDone = null;
    const socket = this.#socket;
    if (frames === null || socket === null || socket.destroyed || socket.writableEnded) {
      this.bufferedAmount -= amount;
      if (done !== null) for (const d of done) d();
      return;
    }
    if (amount === 0 && done === null) {
      socket.write(frames);
      return;
    }
    socket.write(frames, () => {
      this.bufferedAmount -= amount;
      if (done !== null) for (const d of done) d();
    });
  };

  sendText(data: string, amount: number, done?: () => void): void {
    if (this.#codec?.text(data)) this.#queued(amount, done);
    else done?.();
  }

  sendBinary(data: Uint8Array, done?: () => void): void {
    if (this.#codec?.binary(data)) this.#queued(data.byteLength, done);
    else done?.();
  }

  /** A ping (or an unsolicited pong) of at most 125 bytes. */
  ping(data: Uint8Array, pong = false): void {
    if (this.readyState === OPEN && this.#codec?.ping(pong, data)) this.#queued(0);
  }

  /** Starts the closing handshake; `code` undefined: a close frame without a status. */
  close(code: number | undefined, reason: string): void {
    if (this.readyState === CLOSING || this.readyState === CLOSED) return;
    if (this.readyState === CONNECTING) {
      this.readyState = CLOSING;
      this.#abortHandshake?.(new TypeError('WebSocket was closed before the connection was established'));
      return;
    }
    this.readyState = CLOSING;
    if (this.#codec!.close(code ?? -1, reason)) this.#queued(0);
    // The server's close frame may sit behind unread messages: read on, whatever a reader wants.
    this.setReading(true);
    this.#armTimer();
  }

  /** Stops (true) or restarts reading from the server. */
  setReading(reading: boolean): void {
    if (reading) this.#socket?.resume();
    else this.#socket?.pause();
  }

  #armTimer(): void {
    if (this.#timer !== null) return;
    this.#timer = setTimeout(() => this.#socket?.destroy(), CLOSE_TIMEOUT_MS).unref();
  }

  /** Both sides sent their close (or we failed): half-close and wait for the server's FIN. */
  #finishWriting(): void {
    this.readyState = CLOSING;
    // Whatever is queued (the close reply last) goes out before the half-close.
    this.#flush();
    const socket = this.#socket;
    if (socket !== null && !socket.destroyed && !socket.writableEnded) socket.end();
    this.setReading(true);
    this.#armTimer();
  }

  #closed(error: Error | null): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const received = this.#received;
    const wasClean = this.#codec?.closedCleanly === true && this.#error === null;
    const info: CloseInfo =
      received === null ? { wasClean: false, code: 1006, reason: '' } : { wasClean, code: received.code, reason: received.reason };
    const why = error ?? this.#error ?? (received === null ? new TypeError('WebSocket connection closed abnormally') : null);
    if (why !== null && info.code === 1006 && hasSubscribers('websocket:socket_error')) publish('websocket:socket_error', why);
    if (hasSubscribers('websocket:close')) {
      publish('websocket:close', { websocket: { url: this.#url }, code: info.code, reason: info.reason });
    }
    this.#host.onClose(info, why);
  }

  // CodecSink: what the engine decoded.
  onMessage(data: string | Buffer): void {
    this.#host.onMessage(data);
  }
  onPing(data: Buffer): void {
    if (hasSubscribers('websocket:ping')) publish('websocket:ping', { payload: data, websocket: { url: this.#url } });
    this.#host.onPing(data);
  }
  onPong(data: Buffer): void {
    if (hasSubscribers('websocket:pong')) publish('websocket:pong', { payload: data, websocket: { url: this.#url } });
    this.#host.onPong(data);
  }
  onCloseFrame(code: number, reason: string): void {
    this.#received = { code, reason };
    this.#finishWriting();
  }
  onWrite(): void {
    this.#queued(0);
  }
  onFail(code: number, reason: string): void {
    this.#error ??= new TypeError(`WebSocket connection failed (${code}): ${reason}`);
    this.#finishWriting();
  }
}
