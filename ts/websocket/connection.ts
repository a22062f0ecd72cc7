// One WebSocket connection after the handshake. The engine runs it (crates/engine/src/ws/session.rs):
// it reads and decodes frames, answers pings and the server's close, and writes what is sent here,
// one call per message. This side turns the session's events into the host's callbacks, keeps
// `bufferedAmount`, and closes: a timer for a server that never finishes the closing handshake,
// the final close once the engine reports the connection's end. Both WebSocket and
// WebSocketStream sit on this.
import type { Duplex } from 'node:stream';
import { hasSubscribers, publish } from '../core/diagnostics.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { EngineSocket } from '../dispatcher/engine/engine-socket.js';
import { closeRequest, control } from '../native/engine.js';
import { engineError } from '../native/error-codes.js';
import type { RequestSink } from '../native/events.js';
import { openHandshake } from './handshake.js';
import type { WebSocketLimits } from './limits.js';
import type { HeadersInit } from '../fetch/fetch-types.js';

export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;

/** How long to wait for the server to finish the closing handshake before dropping the socket. */
const CLOSE_TIMEOUT_MS = 30_000;

// RFC 6455 opcodes: what the engine is asked to send (src/websocket.rs `wsSend`).
const TEXT = 1;
const BINARY = 2;
const CLOSE = 8;
const PING = 9;
const PONG = 10;
/** A chunk of records, one per send (crates/engine/src/ws/channel.rs `RECORDS`). */
const RECORDS = 0xff;
/** A record's head: opcode (u8) and payload length (u32 LE). */
const RECORD_HEAD = 5;
/**
 * Sends of at most this many bytes are staged and handed to the engine together, one call per
 * tick; a larger one goes as its own chunk (staging would copy it once more).
 */
const STAGE_MAX = 4096;
/** The staging buffer, made at the first send; records never outgrow it (STAGE_MAX). */
const STAGE_SIZE = 16 * 1024;

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

/** The socket's addresses as undici's `websocket:open` message gives them. */
function addressOf(socket: Duplex): { address: string; port: number | undefined; family: string | undefined } | null {
  const s = socket as { remoteAddress?: string; remotePort?: number; remoteFamily?: string };
  return s.remoteAddress == null ? null : { address: s.remoteAddress, port: s.remotePort, family: s.remoteFamily };
}

export class WebSocketConnection implements RequestSink {
  readyState = CONNECTING;
  bufferedAmount = 0;
  readonly #host: ConnectionHost;
  /** The engine request the session runs as (0 until open). */
  #id = 0;
  #abortHandshake: ((reason: Error) => void) | null;
  #received: { code: number; reason: string } | null = null;
  #error: Error | null = null;
  #timer: NodeJS.Timeout | null = null;
  readonly #limits: WebSocketLimits;
  readonly #owner: object;
  /** A reader (WebSocketStream) asked for no more messages for now. */
  #readerFull = false;
  /** Application bytes and write callbacks of sends the engine took, released once per tick. */
  #takenAmount = 0;
  #takenDone: (() => void)[] | null = null;
  #releaseQueued = false;
  /** Bytes handed to the engine's pipe so far (each chunk: its payload and an opcode byte). */
  #pushed = 0;
  /**
   * Sends the engine asked us to wait for (its pipe was full): each with where it ends in
   * `#pushed`, released by the drain event that reports the engine took that far.
   */
  #waiting: { end: number; amount: number; done: (() => void)[] | null }[] = [];
  /** The tick's small sends as records (RECORDS), handed over at once by the flush. */
  #stage: Buffer | null = null;
  #staged = 0;
  #stagedAmount = 0;
  #stagedDone: (() => void)[] | null = null;

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
      const { socket } = result;
      if (this.readyState !== CONNECTING) {
        socket.destroy();
        return;
      }
      if (!this.#start(socket, result.extensions)) return;
      this.readyState = OPEN;
      // The lib:websocket channels (and through them NODE_DEBUG=websocket's WEBSOCKET lines).
      if (hasSubscribers('websocket:open')) {
        publish('websocket:open', {
          address: addressOf(socket),
          protocol: result.protocol,
          extensions: result.extensions,
          websocket: this.#owner,
          handshakeResponse: result.response,
        });
      }
      host.onOpen(result.protocol, result.extensions);
    });
  }

  /** Hands the upgraded connection to the engine's WebSocket session; false: it failed (closed). */
  #start(socket: Duplex, extensions: string): boolean {
    // The session runs inside the engine, on the connection the engine upgraded: a socket from
    // anywhere else (a dispatcher not built on the engine) has no session to run.
    if (!(socket instanceof EngineSocket)) {
      socket.destroy();
      this.#closed(new TypeError('WebSocket handshake failed: the dispatcher did not hand over an engine connection'));
      return false;
    }
    try {
      this.#id = socket.startWebSocket(this, { extensions, ...this.#limits });
    } catch (e) {
      socket.destroy();
      this.#closed(new TypeError(`WebSocket handshake failed: ${(e as Error).message}`));
      return false;
    }
    if (this.#id === 0) this.#closed(new TypeError('WebSocket connection closed abnormally'));
    return this.#id !== 0;
  }

  /** Hands the engine one chunk of `size` bytes; whether its pipe took it below its high-water mark. */
  #push(op: number, data: string | Uint8Array, size: number): boolean {
    this.#pushed += size + 1;
    const below = control.wsSend(this.#id, op, data);
    this.#queueFlush();
    return below;
  }

  /**
   * Adds a send of `size` bytes to the stage: `data` (a string of that many UTF-8 bytes, or
   * bytes). The tick's stage goes to the engine as one chunk at the flush, or sooner when a send
   * must keep its place behind it.
   */
  #stageRecord(op: number, data: string | Uint8Array, size: number): void {
    let stage = this.#stage;
    if (stage === null) stage = this.#stage = Buffer.allocUnsafeSlow(STAGE_SIZE);
    else if (this.#staged + RECORD_HEAD + size > STAGE_SIZE) this.#handOver();
    const at = this.#staged;
    stage[at] = op;
    stage.writeUInt32LE(size, at + 1);
    if (typeof data === 'string') stage.write(data, at + RECORD_HEAD, size, 'utf8');
    else stage.set(data, at + RECORD_HEAD);
    this.#staged = at + RECORD_HEAD + size;
    this.#queueFlush();
  }

  /** Hands the staged records to the engine (one call, one chunk), counting their sends as one. */
  #handOver(): void {
    if (this.#staged === 0) return;
    const size = this.#staged;
    const amount = this.#stagedAmount;
    const done = this.#stagedDone;
    this.#staged = 0;
    this.#stagedAmount = 0;
    this.#stagedDone = null;
    this.#pushed += size + 1;
    this.#sent(control.wsSend(this.#id, RECORDS, this.#stage!.subarray(0, size)), amount, done);
  }

  #queueFlush(): void {
    // The engine is woken once for all a tick sends (one wake-up and one socket write for a
    // handler answering a batch of messages), as requests are flushed.
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flush);
    }
  }

  #flushQueued = false;
  readonly #flush = (): void => {
    this.#flushQueued = false;
    // Handing over records wakes the session too (src/websocket.rs): one call, not two.
    if (this.#staged > 0) this.#handOver();
    else control.wsFlush(this.#id);
  };

  /** A message of `amount` bytes of application data, counted in `bufferedAmount` until it is on its way; then `done`. */
  #send(op: number, data: string | Uint8Array, amount: number, done: (() => void) | undefined): void {
    this.bufferedAmount += amount;
    if (amount <= STAGE_MAX) {
      this.#stageRecord(op, data, amount);
      this.#stagedAmount += amount;
      if (done !== undefined) (this.#stagedDone ??= []).push(done);
      return;
    }
    this.#handOver();
    this.#sent(this.#push(op, data, amount), amount, done === undefined ? null : [done]);
  }

  /**
   * Sends carrying `amount` bytes of application data, just handed to the engine, leave
   * `bufferedAmount` once they are on their way; then `done`. Those the engine took below its
   * high-water mark are let go a microtask later, with the rest of the tick's; those it asked us
   * to wait for, at the drain event that reports them taken.
   */
  #sent(taken: boolean, amount: number, done: (() => void)[] | null): void {
    if (!taken) {
      this.#waiting.push({ end: this.#pushed, amount, done });
      return;
    }
    this.#takenAmount += amount;
    if (done !== null) {
      if (this.#takenDone === null) this.#takenDone = done;
      else this.#takenDone.push(...done);
    }
    if (!this.#releaseQueued) {
      this.#releaseQueued = true;
      queueMicrotask(this.#release);
    }
  }

  readonly #release = (): void => {
    this.#releaseQueued = false;
    const done = this.#takenDone;
    this.bufferedAmount -= this.#takenAmount;
    this.#takenAmount = 0;
    this.#takenDone = null;
    if (done !== null) for (const d of done) d();
  };

  /** Lets go of the waiting sends that end at or before `taken` bytes (all of them: Infinity). */
  #releaseWaiting(taken: number): void {
    let n = 0;
    while (n < this.#waiting.length && this.#waiting[n]!.end <= taken) n++;
    if (n === 0) return;
    const released = this.#waiting.splice(0, n);
    for (const w of released) this.bufferedAmount -= w.amount;
    for (const w of released) if (w.done !== null) for (const d of w.done) d();
  }

  sendText(data: string, amount: number, done?: () => void): void {
    if (this.readyState !== OPEN) return done?.();
    this.#send(TEXT, data, amount, done);
  }

  sendBinary(data: Uint8Array, done?: () => void): void {
    if (this.readyState !== OPEN) return done?.();
    this.#send(BINARY, data, data.byteLength, done);
  }

  /** A ping (or an unsolicited pong) of at most 125 bytes. */
  ping(data: Uint8Array, pong = false): void {
    if (this.readyState === OPEN) this.#stageRecord(pong ? PONG : PING, data, data.byteLength);
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
    let payload: Buffer = Buffer.alloc(0);
    if (code !== undefined) {
      payload = Buffer.allocUnsafe(2 + Buffer.byteLength(reason));
      payload.writeUInt16BE(code, 0);
      payload.write(reason, 2);
    }
    this.#stageRecord(CLOSE, payload, payload.length);
    this.#closing();
  }

  /** A reader stops (false) or restarts (true) reading from the server. */
  setReading(reading: boolean): void {
    this.#readerFull = !reading;
    this.#applyReading();
  }

  #applyReading(): void {
    if (this.#id === 0 || this.readyState === CLOSED) return;
    // Once closing, the server's close frame may sit behind unread messages: read on, whatever a
    // reader wants.
    if (this.readyState === CLOSING || !this.#readerFull) control.resume(this.#id);
    else control.pause(this.#id);
  }

  /** The closing handshake began: read on, and give the server a while to finish it. */
  #closing(): void {
    this.readyState = CLOSING;
    this.#applyReading();
    if (this.#timer === null) this.#timer = setTimeout(() => this.#closed(null), CLOSE_TIMEOUT_MS).unref();
  }

  #closed(error: Error | null): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#id !== 0) {
      // Ends the session if it still runs (the close timer); a no-op once the engine ended it.
      control.abort(this.#id);
      closeRequest(this.#id);
    }
    this.#releaseWaiting(Infinity);
    // Staged sends will never go now: let them go too, after those that waited.
    const staged = this.#stagedDone;
    this.bufferedAmount -= this.#stagedAmount;
    this.#staged = this.#stagedAmount = 0;
    this.#stagedDone = null;
    if (staged !== null) for (const d of staged) d();
    const received = this.#received;
    const info: CloseInfo =
      received === null
        ? { wasClean: false, code: 1006, reason: '' }
        : { wasClean: this.#error === null, code: received.code, reason: received.reason };
    const why = error ?? this.#error ?? (received === null ? new TypeError('WebSocket connection closed abnormally') : null);
    if (why !== null && info.code === 1006 && hasSubscribers('websocket:socket_error')) publish('websocket:socket_error', why);
    if (hasSubscribers('websocket:close')) {
      publish('websocket:close', { websocket: this.#owner, code: info.code, reason: info.reason });
    }
    this.#host.onClose(info, why);
  }

  // RequestSink: the session's events.
  onWsMessage(data: string | Buffer): void {
    this.#host.onMessage(data);
  }
  onWsPing(data: Buffer): void {
    if (hasSubscribers('websocket:ping')) publish('websocket:ping', { payload: data, websocket: this.#owner });
    this.#host.onPing(data);
  }
  onWsPong(data: Buffer): void {
    if (hasSubscribers('websocket:pong')) publish('websocket:pong', { payload: data, websocket: this.#owner });
    this.#host.onPong(data);
  }
  onWsClose(code: number, reason: string): void {
    // The engine answered it (unless our close went first) and half-closes once that is out.
    this.#received = { code: code === 0 ? 1005 : code, reason };
    this.#closing();
  }
  onWsFail(code: number, reason: string): void {
    this.#error ??= new TypeError(`WebSocket connection failed (${code}): ${reason}`);
    this.#closing();
  }
  onEngineBodyDrain(taken: number): void {
    this.#releaseWaiting(taken);
  }
  /** The connection closed (the server's end, or the engine ended the session). */
  onEngineEnd(): void {
    this.#closed(null);
  }
  onEngineError(code: number, errno: string, message: string, socket: string): void {
    this.#error ??= engineError(code, errno, message, socket);
    this.#closed(null);
  }
  // The HTTP side of the request is over.
  onEngineHead(): void {}
  onEngineData(): void {}
  onEngineUpgrade(): void {}
  onEngineRetry(): void {}
}
