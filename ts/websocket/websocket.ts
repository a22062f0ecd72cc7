// WebSocket with the WHATWG interface (websockets.spec.whatwg.org) plus undici's extras: the
// options-object second argument `{ protocols, dispatcher, headers }` and `ping(ws, payload)`.
// Frames are the engine's (crates/engine/src/ws/); this class is the event-facing shell.
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import { webidlInterface } from '../core/webidl-interface.js';
import { defineEventHandlerAttributes } from '../core/event-handler-attributes.js';
import { CloseEvent, ErrorEvent, MessageEvent } from './events.js';
import { parseProtocols, parseWebSocketUrl } from './handshake.js';
import { CLOSED, CLOSING, CONNECTING, OPEN, WebSocketConnection, type CloseInfo, type ConnectionHost } from './connection.js';
import { dispatcherLimits, resolveLimits, type WebSocketLimits, type WebSocketOptions } from './limits.js';
import type { HeadersInit } from '../fetch/fetch-types.js';
import type { AddEventListenerOptions, EventListenerOrEventListenerObject } from '../core/event-types.js';

export type BinaryType = 'blob' | 'arraybuffer';

/**
 * ferro also takes the receive limits here (`maxPayloadSize`, `maxFragments`,
 * `stalledWriteTimeout`); each one given wins over the dispatcher's `webSocket` option.
 */
export interface WebSocketInit extends WebSocketOptions {
  protocols?: string | string[];
  /** Default: the global dispatcher. */
  dispatcher?: Dispatcher;
  headers?: HeadersInit;
}

/** The limits a socket made with `init` over `dispatcher` runs with. */
export function limitsFor(init: WebSocketOptions, dispatcher: Dispatcher): WebSocketLimits {
  return resolveLimits(init, dispatcherLimits(dispatcher), (message) => new TypeError(message));
}

export interface WebSocketEventMap {
  close: CloseEvent;
  error: ErrorEvent;
  message: MessageEvent;
  open: Event;
  /** ferro: a ping from the server (already answered); `data` is its payload. */
  ping: MessageEvent<Buffer>;
  /** ferro: a pong from the server; `data` is its payload. */
  pong: MessageEvent<Buffer>;
}

type HandlerName = 'open' | 'message' | 'error' | 'close';
type Handler<K extends HandlerName = HandlerName> = ((this: WebSocket, ev: WebSocketEventMap[K]) => unknown) | null;
type Listener<K extends keyof WebSocketEventMap> = (this: WebSocket, ev: WebSocketEventMap[K]) => unknown;
type Sendable = string | Uint8Array | Blob;

/** Close codes a script may send (WHATWG: 1000 or 3000–4999). */
export function checkCloseArgs(code: number | undefined, reason: string | undefined): string {
  if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
    throw new DOMException(`Invalid close code ${code}`, 'InvalidAccessError');
  }
  const text = reason === undefined ? '' : String(reason);
  if (Buffer.byteLength(text) > 123) throw new DOMException('The close reason is longer than 123 bytes', 'SyntaxError');
  return text;
}

/** An ArrayBuffer or view as bytes (no copy; a Uint8Array, Buffers included, is itself). */
export function bytesOf(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (data instanceof Uint8Array) return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/**
 * A copy of `bytes` in an ArrayBuffer of its own: a new buffer filled by `set` costs less than
 * `buffer.slice` of the event batch, which makes its result through the species constructor,
 * called from C++ (about 0.8-0.9 against 0.85-1.4 µs for 100 bytes, on a loaded machine).
 */
function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

export class WebSocket extends EventTarget {
  static readonly CONNECTING = CONNECTING;
  static readonly OPEN = OPEN;
  static readonly CLOSING = CLOSING;
  static readonly CLOSED = CLOSED;
  // On the prototype (below), as WebIDL constants are: not own properties of every socket.
  declare readonly CONNECTING: typeof CONNECTING;
  declare readonly OPEN: typeof OPEN;
  declare readonly CLOSING: typeof CLOSING;
  declare readonly CLOSED: typeof CLOSED;
  // Event handler attributes, defined on the prototype below (core/event-handler-attributes.ts).
  declare onopen: Handler<'open'>;
  declare onmessage: Handler<'message'>;
  declare onerror: Handler<'error'>;
  declare onclose: Handler<'close'>;

  readonly #url: URL;
  /** What every MessageEvent carries as its origin, read once (URL's getter makes a new string per read). */
  readonly #origin: string;
  readonly #conn: WebSocketConnection;
  #protocol = '';
  #extensions = '';
  #binaryType: BinaryType = 'blob';
  /** Sends waiting behind a Blob being read, so messages keep their order. */
  #queue: Sendable[] | null = null;
  #queuedBytes = 0;

  constructor(url: string | URL, protocols?: string | string[] | WebSocketInit) {
    super();
    if (arguments.length === 0) throw new TypeError("Failed to construct 'WebSocket': 1 argument required");
    const init: WebSocketInit =
      protocols !== null && typeof protocols === 'object' && !Array.isArray(protocols)
        ? (protocols as WebSocketInit)
        : { protocols: protocols as string | string[] | undefined };
    this.#url = parseWebSocketUrl(url);
    this.#origin = this.#url.origin;
    const list = parseProtocols(init.protocols);
    const dispatcher = init.dispatcher ?? getGlobalDispatcher();
    const limits = limitsFor(init, dispatcher);
    const host: ConnectionHost = {
      onOpen: (protocol, extensions) => {
        this.#protocol = protocol;
        this.#extensions = extensions;
        this.dispatchEvent(new Event('open'));
      },
      onMessage: (data) => this.#onMessage(data),
      onPing: (data) => this.dispatchEvent(new MessageEvent('ping', { data })),
      onPong: (data) => this.dispatchEvent(new MessageEvent('pong', { data })),
      onClose: (info, error) => this.#onClose(info, error),
    };
    this.#conn = new WebSocketConnection(
      { owner: this, url: this.#url, protocols: list, headers: init.headers, dispatcher, limits },
      host,
    );
  }

  get url(): string {
    return this.#url.href;
  }
  get readyState(): number {
    return this.#conn.readyState;
  }
  get bufferedAmount(): number {
    return this.#conn.bufferedAmount + this.#queuedBytes;
  }
  get protocol(): string {
    return this.#protocol;
  }
  get extensions(): string {
    return this.#extensions;
  }
  get binaryType(): BinaryType {
    return this.#binaryType;
  }
  set binaryType(value: BinaryType) {
    this.#binaryType = value === 'arraybuffer' ? 'arraybuffer' : 'blob';
  }

  send(data: string | ArrayBuffer | ArrayBufferView | Blob): void {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'send' on 'WebSocket': 1 argument required");
    if (this.#conn.readyState === CONNECTING) throw new DOMException('The WebSocket is still connecting', 'InvalidStateError');
    if (this.#conn.readyState !== OPEN) return;
    let item: Sendable;
    if (typeof data === 'string') item = data;
    else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) item = bytesOf(data);
    else if (data instanceof Blob) item = data;
    else item = String(data);
    // Behind a Blob being read, bytes wait: a copy, so that the caller may reuse its buffer at once
    // (new Uint8Array: a Buffer's own slice() would be a view).
    if (this.#queue !== null || item instanceof Blob) return this.#enqueue(item instanceof Uint8Array ? new Uint8Array(item) : item);
    this.#sendNow(item as string | Uint8Array);
  }

  #sendNow(item: string | Uint8Array): void {
    if (typeof item === 'string') this.#conn.sendText(item, Buffer.byteLength(item));
    else this.#conn.sendBinary(item);
  }

  #enqueue(item: Sendable): void {
    // The bytes count as buffered from now on, as the spec asks.
    const size = typeof item === 'string' ? Buffer.byteLength(item) : item instanceof Blob ? item.size : item.byteLength;
    this.#queuedBytes += size;
    const first = this.#queue === null;
    (this.#queue ??= []).push(item);
    if (first) void this.#drainQueue();
  }

  async #drainQueue(): Promise<void> {
    const queue = this.#queue!;
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i]!;
      const bytes = item instanceof Blob ? new Uint8Array(await item.arrayBuffer()) : item;
      this.#queuedBytes -= typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength;
      if (this.#conn.readyState === OPEN) this.#sendNow(bytes);
    }
    this.#queue = null;
  }

  close(code?: number, reason?: string): void {
    let c = code === undefined ? undefined : toUint16(code);
    const text = checkCloseArgs(c, reason);
    // A reason needs a status code in the frame: WHATWG makes it 1000.
    if (c === undefined && text !== '') c = 1000;
    this.#conn.close(c, text);
  }

  #onMessage(data: string | Buffer): void {
    if (this.#conn.readyState !== OPEN) return;
    let value: string | ArrayBuffer | Blob;
    if (typeof data === 'string') value = data;
    else if (this.#binaryType === 'arraybuffer') value = arrayBufferOf(data);
    else value = new Blob([data as Uint8Array<ArrayBuffer>]);
    this.dispatchEvent(new MessageEvent('message', { data: value, origin: this.#origin }));
  }

  #onClose(info: CloseInfo, error: Error | null): void {
    if (error !== null) {
      // Always a TypeError, as undici's (code checks `instanceof TypeError`); the network's own
      // error is its cause.
      const reported = error instanceof TypeError ? error : new TypeError(error.message, { cause: error });
      this.dispatchEvent(new ErrorEvent('error', { error: reported, message: reported.message }));
    }
    this.dispatchEvent(new CloseEvent('close', info));
  }

  override addEventListener<K extends keyof WebSocketEventMap>(
    type: K,
    listener: Listener<K>,
    options?: boolean | AddEventListenerOptions,
  ): void;
  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  override addEventListener(type: string, listener: unknown, options?: boolean | AddEventListenerOptions): void {
    super.addEventListener(type, listener as EventListenerOrEventListenerObject | null, options);
  }

  override removeEventListener<K extends keyof WebSocketEventMap>(
    type: K,
    listener: Listener<K>,
    options?: boolean | EventListenerOptions,
  ): void;
  override removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions,
  ): void;
  override removeEventListener(type: string, listener: unknown, options?: boolean | EventListenerOptions): void {
    super.removeEventListener(type, listener as EventListenerOrEventListenerObject | null, options);
  }

  /** @internal The connection under this socket (for `ping`). */
  static connectionOf(ws: WebSocket): WebSocketConnection {
    return ws.#conn;
  }
}

for (const [name, value] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
  Object.defineProperty(WebSocket.prototype, name, { value, enumerable: true });
}
defineEventHandlerAttributes(WebSocket.prototype, ['open', 'message', 'error', 'close']);
webidlInterface(WebSocket, [
  'url', 'readyState', 'bufferedAmount', 'extensions', 'protocol', 'binaryType',
  'onopen', 'onerror', 'onclose', 'onmessage', 'send', 'close',
]);

/** WebIDL `[Clamp] unsigned short`. */
function toUint16(code: number): number {
  const n = Number(code);
  if (Number.isNaN(n)) return 0;
  return Math.min(Math.max(Math.round(n), 0), 0xffff);
}

/** Sends a ping frame (undici's `ping`); a no-op unless the socket is open. */
export function ping(ws: WebSocket, payload?: Buffer): void {
  if (!(ws instanceof WebSocket)) throw new TypeError('ping expects a WebSocket');
  if (payload !== undefined && (!Buffer.isBuffer(payload) || payload.length > 125)) {
    throw new TypeError('The ping payload must be a Buffer of at most 125 bytes');
  }
  WebSocket.connectionOf(ws).ping(payload ?? Buffer.alloc(0));
}
