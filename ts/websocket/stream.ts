// WebSocketStream (WHATWG explainer, as undici ships it): the connection as a ReadableStream of
// messages and a WritableStream for sending, with backpressure both ways. While the readable's
// queue is full the socket is paused, so the engine stops reading from the server.
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import { parseProtocols, parseWebSocketUrl } from './handshake.js';
import { OPEN, WebSocketConnection, type CloseInfo, type ConnectionHost } from './connection.js';
import type { WebSocketOptions } from './limits.js';
import { bytesOf, checkCloseArgs, limitsFor } from './websocket.js';
import type { HeadersInit } from '../fetch/fetch-types.js';
import { webidlInterface } from '../core/webidl-interface.js';
// node:stream/web's classes (the globals, under the names undici's declarations use).
import {
  CountQueuingStrategy,
  ReadableStream as WebReadableStream,
  WritableStream as WebWritableStream,
  type ReadableStreamDefaultController,
} from 'node:stream/web';

/** ferro / undici extras (dispatcher, headers, the receive limits), as for WebSocket. */
export interface WebSocketStreamOptions extends WebSocketOptions {
  protocols?: string | string[];
  signal?: AbortSignal | null;
  dispatcher?: Dispatcher;
  headers?: HeadersInit;
}

/** What `closed` resolves with; `close()` and `WebSocketError` take any part of it. */
export interface WebSocketCloseInfo {
  closeCode: number;
  reason: string;
}

export interface WebSocketOpenInfo {
  extensions: string;
  protocol: string;
  /** Messages: a string per text message, a Uint8Array per binary one. */
  readable: WebReadableStream;
  /** Takes strings (text messages) and BufferSources (binary ones); anything else is sent as its string. */
  writable: WebWritableStream;
}

/** Messages held for a reader before the socket is paused. */
const READ_HIGH_WATER_MARK = 16;

export class WebSocketError extends DOMException {
  #code: number | null;
  #reason: string;

  constructor(message = '', init: Partial<WebSocketCloseInfo> = {}) {
    super(message, 'WebSocketError');
    let code = init.closeCode ?? null;
    const reason = checkCloseArgs(code ?? undefined, init.reason);
    if (code === null && reason !== '') code = 1000;
    this.#code = code;
    this.#reason = reason;
  }

  /**
   * @internal An unclean close as undici reports it ('unclean close', with the connection's close
   * code, 1006 when no close frame came, which no script may send); `cause`: why, when known.
   */
  static unclean(info: CloseInfo, cause: Error | null): WebSocketError {
    const err = new WebSocketError('unclean close');
    err.#code = info.code;
    err.#reason = info.reason;
    if (cause !== null) Object.defineProperty(err, 'cause', { value: cause, configurable: true, writable: true });
    return err;
  }

  get closeCode(): number | null {
    return this.#code;
  }
  get reason(): string {
    return this.#reason;
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  // Unobserved rejections are the caller's choice, not an unhandled-rejection crash.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

export class WebSocketStream {
  readonly #url: URL;
  /** Null when the signal was already aborted: no connection is made. */
  readonly #conn: WebSocketConnection | null = null;
  readonly #opened = deferred<WebSocketOpenInfo>();
  readonly #closed = deferred<WebSocketCloseInfo>();
  #readController: ReadableStreamDefaultController<string | Uint8Array> | null = null;
  #writeError: ((e: unknown) => void) | null = null;
  #wasOpened = false;
  /** The signal aborted the handshake: opened and closed were rejected with its reason. */
  #handshakeAborted = false;

  constructor(url: string | URL, options: WebSocketStreamOptions = {}) {
    this.#url = parseWebSocketUrl(url);
    const protocols = parseProtocols(options.protocols);
    const signal = options.signal ?? null;
    const dispatcher = options.dispatcher ?? getGlobalDispatcher();
    const limits = limitsFor(options, dispatcher);
    if (signal?.aborted) {
      this.#opened.reject(signal.reason);
      this.#closed.reject(signal.reason);
      return;
    }
    const host: ConnectionHost = {
      onOpen: (protocol, extensions) => this.#onOpen(protocol, extensions),
      onMessage: (data) => this.#onMessage(data),
      onPing: () => {},
      onPong: () => {},
      onClose: (info, error) => this.#onClose(info, error),
    };
    const conn = new WebSocketConnection(
      {
        owner: this,
        url: this.#url,
        protocols,
        headers: options.headers,
        dispatcher,
        limits,
      },
      host,
    );
    this.#conn = conn;
    signal?.addEventListener(
      'abort',
      () => {
        if (this.#wasOpened) return;
        this.#handshakeAborted = true;
        conn.close(undefined, '');
        this.#opened.reject(signal.reason);
        this.#closed.reject(signal.reason);
      },
      { once: true },
    );
  }

  get url(): string {
    return this.#url.href;
  }
  get opened(): Promise<WebSocketOpenInfo> {
    return this.#opened.promise;
  }
  get closed(): Promise<WebSocketCloseInfo> {
    return this.#closed.promise;
  }

  close(closeInfo?: Partial<WebSocketCloseInfo>): void {
    let code = closeInfo?.closeCode;
    const reason = checkCloseArgs(code, closeInfo?.reason);
    if (code === undefined && reason !== '') code = 1000;
    this.#conn?.close(code, reason);
  }

  #onOpen(protocol: string, extensions: string): void {
    this.#wasOpened = true;
    const conn = this.#conn!;
    const readable = new WebReadableStream<string | Uint8Array>(
      {
        start: (controller) => void (this.#readController = controller),
        pull: () => conn.setReading(true),
        cancel: (reason) => this.close(toCloseInfo(reason)),
      },
      new CountQueuingStrategy({ highWaterMark: READ_HIGH_WATER_MARK }),
    );
    const writable = new WebWritableStream<unknown>({
      start: (controller) => void (this.#writeError = (e) => controller.error(e)),
      write: (chunk) =>
        new Promise<void>((resolve) => {
          // A BufferSource is a binary message; anything else is converted to a string (WebIDL).
          if (chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk)) return conn.sendBinary(bytesOf(chunk), resolve);
          const text = String(chunk);
          conn.sendText(text, Buffer.byteLength(text), resolve);
        }),
      close: () => this.close(),
      abort: (reason) => this.close(toCloseInfo(reason)),
    });
    this.#opened.resolve({ extensions, protocol, readable, writable });
  }

  #onMessage(data: string | Buffer): void {
    const controller = this.#readController;
    // Once closing (close(), cancel, abort) messages are dropped, as WebSocket drops them.
    if (controller === null || this.#conn?.readyState !== OPEN) return;
    // A copy: `data` is a view into the engine's event batch.
    controller.enqueue(typeof data === 'string' ? data : new Uint8Array(data));
    if ((controller.desiredSize ?? 1) <= 0) this.#conn?.setReading(false);
  }

  #onClose(info: CloseInfo, error: Error | null): void {
    // The abort already rejected both promises.
    if (this.#handshakeAborted) return;
    if (!this.#wasOpened) {
      const never = new WebSocketError('Socket never opened');
      if (error !== null) Object.defineProperty(never, 'cause', { value: error, configurable: true, writable: true });
      this.#opened.reject(never);
      this.#closed.reject(WebSocketError.unclean(info, error));
      return;
    }
    if (info.wasClean) {
      try {
        this.#readController?.close();
      } catch {
        /* already closed or errored by the reader */
      }
      this.#writeError?.(new DOMException('A closed WebSocketStream cannot be written to', 'InvalidStateError'));
      this.#closed.resolve({ closeCode: info.code, reason: info.reason });
      return;
    }
    const err = WebSocketError.unclean(info, error);
    try {
      this.#readController?.error(err);
    } catch {
      /* already closed */
    }
    this.#writeError?.(err);
    this.#closed.reject(err);
  }
}

/** The close code and reason a stream's abort / cancel reason carries (a WebSocketError's). */
function toCloseInfo(reason: unknown): Partial<WebSocketCloseInfo> {
  if (!(reason instanceof WebSocketError) || reason.closeCode === null) return {};
  return { closeCode: reason.closeCode, reason: reason.reason };
}

webidlInterface(WebSocketStream, ['url', 'opened', 'closed', 'close']);
webidlInterface(WebSocketError, ['closeCode', 'reason']);
