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
import type { BufferSource } from '../core/event-types.js';

/** ferro / undici extras (dispatcher, headers, the receive limits), as for WebSocket. */
export interface WebSocketStreamOptions extends WebSocketOptions {
  protocols?: string | string[];
  signal?: AbortSignal | null;
  dispatcher?: Dispatcher;
  headers?: HeadersInit;
}

export interface WebSocketCloseInfo {
  closeCode?: number;
  reason?: string;
}

export interface WebSocketOpenInfo {
  extensions: string;
  protocol: string;
  readable: ReadableStream<string | Uint8Array>;
  writable: WritableStream<string | BufferSource>;
}

/** Messages held for a reader before the socket is paused. */
const READ_HIGH_WATER_MARK = 16;

export class WebSocketError extends DOMException {
  #code: number | null;
  readonly #reason: string;

  constructor(message = '', init: WebSocketCloseInfo = {}) {
    super(message, 'WebSocketError');
    let code = init.closeCode ?? null;
    const reason = checkCloseArgs(code ?? undefined, init.reason);
    if (code === null && reason !== '') code = 1000;
    this.#code = code;
    this.#reason = reason;
  }

  /** @internal How an abnormal close (1006, which no script may send) is reported. */
  static abnormal(message: string, closeCode: number): WebSocketError {
    const err = new WebSocketError(message);
    err.#code = closeCode;
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
  readonly #conn: WebSocketConnection;
  readonly #opened = deferred<WebSocketOpenInfo>();
  readonly #closed = deferred<WebSocketCloseInfo>();
  #readController: ReadableStreamDefaultController<string | Uint8Array> | null = null;
  #writeError: ((e: unknown) => void) | null = null;
  #wasOpened = false;
  #abortReason: unknown = undefined;

  constructor(url: string | URL, options: WebSocketStreamOptions = {}) {
    this.#url = parseWebSocketUrl(url);
    const protocols = parseProtocols(options.protocols);
    const signal = options.signal ?? null;
    const dispatcher = options.dispatcher ?? getGlobalDispatcher();
    const limits = limitsFor(options, dispatcher);
    if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
    const host: ConnectionHost = {
      onOpen: (protocol, extensions) => this.#onOpen(protocol, extensions),
      onMessage: (data) => this.#onMessage(data),
      onPing: () => {},
      onPong: () => {},
      onClose: (info, error) => this.#onClose(info, error),
    };
    this.#conn = new WebSocketConnection(
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
    signal?.addEventListener(
      'abort',
      () => {
        if (this.#wasOpened) return;
        this.#abortReason = signal.reason;
        this.#conn.close(undefined, '');
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

  close(closeInfo?: WebSocketCloseInfo): void {
    let code = closeInfo?.closeCode;
    const reason = checkCloseArgs(code, closeInfo?.reason);
    if (code === undefined && reason !== '') code = 1000;
    this.#conn.close(code, reason);
  }

  #onOpen(protocol: string, extensions: string): void {
    this.#wasOpened = true;
    const conn = this.#conn;
    const readable = new ReadableStream<string | Uint8Array>(
      {
        start: (controller) => void (this.#readController = controller),
        pull: () => conn.setReading(true),
        cancel: (reason) => this.close(toCloseInfo(reason)),
      },
      new CountQueuingStrategy({ highWaterMark: READ_HIGH_WATER_MARK }),
    );
    const writable = new WritableStream<string | BufferSource>({
      start: (controller) => void (this.#writeError = (e) => controller.error(e)),
      write: (chunk) =>
        new Promise<void>((resolve) => {
          if (typeof chunk === 'string') conn.sendText(chunk, Buffer.byteLength(chunk), resolve);
          else if (chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk)) conn.sendBinary(bytesOf(chunk), resolve);
          else throw new TypeError('WebSocketStream writes strings and BufferSources');
        }),
      close: () => this.close(),
      abort: (reason) => this.close(toCloseInfo(reason)),
    });
    this.#opened.resolve({ extensions, protocol, readable, writable });
  }

  #onMessage(data: string | Buffer): void {
    const controller = this.#readController;
    // Once closing (close(), cancel, abort) messages are dropped, as WebSocket drops them.
    if (controller === null || this.#conn.readyState !== OPEN) return;
    // A copy: `data` is a view into the engine's event batch.
    controller.enqueue(typeof data === 'string' ? data : new Uint8Array(data));
    if ((controller.desiredSize ?? 1) <= 0) this.#conn.setReading(false);
  }

  #onClose(info: CloseInfo, error: Error | null): void {
    if (!this.#wasOpened) {
      const reason = this.#abortReason !== undefined ? this.#abortReason : new WebSocketError(error?.message ?? 'WebSocket connection failed', {});
      this.#opened.reject(reason);
      this.#closed.reject(reason);
      return;
    }
    if (info.wasClean) {
      try {
        this.#readController?.close();
      } catch {
        /* already closed or errored by the reader */
      }
      this.#writeError?.(new WebSocketError('The WebSocket is closed'));
      this.#closed.resolve({ closeCode: info.code, reason: info.reason });
      return;
    }
    const err = WebSocketError.abnormal(error?.message ?? 'WebSocket connection closed abnormally', info.code);
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
function toCloseInfo(reason: unknown): WebSocketCloseInfo {
  if (!(reason instanceof WebSocketError) || reason.closeCode === null) return {};
  return { closeCode: reason.closeCode, reason: reason.reason };
}
