// One WebSocket connection after the handshake: feeds socket bytes to the engine's codec, writes
// the frames it makes, keeps `bufferedAmount`, and runs the closing handshake to the final close.
// Both WebSocket and WebSocketStream sit on this.
import type { Duplex } from 'node:stream';
import { hasSubscribers, publish } from '../core/diagnostics.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { openHandshake } from './handshake.js';
import type { WebSocketLimits } from './limits.js';
import { createCodec, decodeEvents, type CodecSink, type NativeWebSocket } from './native.js';
import type { HeadersInit } from '../fetch/fetch-types.js';

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
  /** The WebSocket or WebSocketStream: the `websocket` of its diagnostics messages, as undici's. */
  owner: object;
  url: URL;
  protocols: string[];
  headers: HeadersInit | null | undefined;
  dispatcher: Dispatcher;
  limits: WebSocketLimits;
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
  readonly #limits: WebSocketLimits;
  readonly #owner: object;
  /** A reader (WebSocketStream) asked for no more messages for now. */
  #readerFull = false;
  /**
   * Our replies to the server (pongs) wait in a full write queue: reading stops until it drains,
   * so a server that sends pings and never reads cannot grow the queue (GHSA-9fm3-97px-rjf6).
   */
  #writeBlocked = false;
  /** The codec queued frames of its own while decoding the current chunk. */
  #replied = false;
  /** Fails the connection when the blocked queue makes no progress (see #watchStall). */
  #stallTimer: NodeJS.Timeout | null = null;
  /** Bytes handed to the socket so far; less its writableLength, the bytes it has written. */
  #handed = 0;

  constructor(opts: ConnectionOptions, host: ConnectionHost) {
    this.#host = host;
    this.#owner = opts.owner;
    this.#limits = opts.limits;
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
        this.#codec = createCodec(result.extensions, this.#limits.maxPayloadSize, this.#limits.maxFragments);
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
          websocket: this.#owner,
          handshakeResponse: result.response,
        });
      }
      host.onOpen(result.protocol, result.extensions);
    });
  }

  #attach(socket: Duplex): void {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(socket, chunk));
    // The server finished: nothing more can come, so the connection is over.
    socket.on('end', () => socket.destroy());
    socket.on('error', (err: Error) => (this.#error ??= err));
    socket.on('close', () => this.#closed(null));
  }

  /**
   * Decodes `chunk`. The codec stops early when its replies (pongs) reach a budget: they are sent
   * and, if the write queue is then full, the rest goes back to the socket until it drains.
   */
  #read(socket: Duplex, chunk: Buffer): void {
    let rest = chunk;
    for (;;) {
      let events: Buffer | null;
      try {
        events = this.#codec?.feed(rest) ?? null;
      } catch (err) {
        // The engine refused to go on (a caught panic): the connection fails, the process lives.
        this.#error ??= new TypeError(`WebSocket connection failed: ${(err as Error).message}`, { cause: err });
        this.readyState = CLOSING;
        return void socket.destroy();
      }
      const took = events === null ? -1 : decodeEvents(events, this);
      if (this.#replied) this.#sendReplies();
      if (took < 0) return;
      rest = rest.subarray(took);
      if (this.#writeBlocked && this.readyState === OPEN) return void socket.unshift(rest);
    }
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
    this.#handed += frames.length;
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
    this.#applyReading();
    this.#armTimer();
  }

  /** A reader stops (false) or restarts (true) reading from the server. */
  setReading(reading: boolean): void {
    this.#readerFull = !reading;
    this.#applyReading();
  }

  #applyReading(): void {
    // Once our close went out pings are no longer answered, and the server's close frame may sit
    // behind unread messages: read on, whatever a reader wants or the write queue holds.
    const closing = this.readyState === CLOSING;
    if (closing || (!this.#readerFull && !this.#writeBlocked)) this.#socket?.resume();
    else this.#socket?.pause();
  }

  /**
   * Writes the codec's replies at once, not a microtask later, so the write queue's state is known
   * before more is decoded: a full one stops reading until it drains, as undici does.
   */
  #sendReplies(): void {
    this.#replied = false;
    const socket = this.#socket;
    // Whether the queue was already full of what the application sent (a large upload).
    const fullBefore = socket !== null && socket.writableLength >= socket.writableHighWaterMark;
    this.#flush();
    if (socket === null || this.#writeBlocked || !socket.writableNeedDrain) return;
    this.#writeBlocked = true;
    this.#applyReading();
    socket.once('drain', () => {
      this.#writeBlocked = false;
      this.#clearStall();
      this.#applyReading();
    });
    // Only a queue our replies filled can fail the connection: the application's own large sends
    // to a slow server only pause reading (as in undici) however long they take.
    if (!fullBefore) this.#watchStall(socket, this.#handed - socket.writableLength);
  }

  /**
   * While reading waits for the write queue, fails the connection with 1008 if the server takes
   * none of it for `stalledWriteTimeout` ms: it sends and never reads, and the connection would
   * otherwise hang for ever with our replies in memory.
   */
  #watchStall(socket: Duplex, written: number): void {
    const ms = this.#limits.stalledWriteTimeout;
    if (ms === 0) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = null;
      if (!this.#writeBlocked || socket.destroyed) return;
      // Some of the queue went out (whatever was added since): the server reads, slowly. Wait on.
      const now = this.#handed - socket.writableLength;
      if (now > written) return this.#watchStall(socket, now);
      this.#error ??= new TypeError(
        `WebSocket connection failed (1008): the server left ${socket.writableLength} bytes of our frames unread for ${ms} ms`,
      );
      // The close frame is queued behind what the server does not read: it cannot arrive, so the
      // connection ends here.
      this.#codec?.close(1008, '');
      this.readyState = CLOSING;
      socket.destroy();
    }, ms).unref();
  }

  #clearStall(): void {
    if (this.#stallTimer !== null) clearTimeout(this.#stallTimer);
    this.#stallTimer = null;
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
    this.#applyReading();
    this.#armTimer();
  }

  #closed(error: Error | null): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#clearStall();
    const received = this.#received;
    const wasClean = this.#codec?.closedCleanly === true && this.#error === null;
    const info: CloseInfo =
      received === null ? { wasClean: false, code: 1006, reason: '' } : { wasClean, code: received.code, reason: received.reason };
    const why = error ?? this.#error ?? (received === null ? new TypeError('WebSocket connection closed abnormally') : null);
    if (why !== null && info.code === 1006 && hasSubscribers('websocket:socket_error')) publish('websocket:socket_error', why);
    if (hasSubscribers('websocket:close')) {
      publish('websocket:close', { websocket: this.#owner, code: info.code, reason: info.reason });
    }
    this.#host.onClose(info, why);
  }

  // CodecSink: what the engine decoded.
  onMessage(data: string | Buffer): void {
    this.#host.onMessage(data);
  }
  onPing(data: Buffer): void {
    if (hasSubscribers('websocket:ping')) publish('websocket:ping', { payload: data, websocket: this.#owner });
    this.#host.onPing(data);
  }
  onPong(data: Buffer): void {
    if (hasSubscribers('websocket:pong')) publish('websocket:pong', { payload: data, websocket: this.#owner });
    this.#host.onPong(data);
  }
  onCloseFrame(code: number, reason: string): void {
    this.#received = { code, reason };
    this.#finishWriting();
  }
  onWrite(): void {
    // Sent when the chunk is decoded (#sendReplies).
    this.#replied = true;
  }
  onFail(code: number, reason: string): void {
    this.#error ??= new TypeError(`WebSocket connection failed (${code}): ${reason}`);
    this.#finishWriting();
  }
}
