// EventSource (HTML, "Server-sent events"): a text/event-stream fetched with ferro's fetch over a
// dispatcher (the global one unless `node.dispatcher` / `dispatcher` names another), its events
// fired as MessageEvents, reconnecting after the reconnection time (the server's `retry`) with
// Last-Event-ID. Requests are fetch's, so NODE_DEBUG=fetch and the diagnostics channels see them
// as they see undici's EventSource requests.
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import { InvalidArgumentError } from '../core/errors.js';
import { defineEventHandlerAttributes } from '../core/event-handler-attributes.js';
import type { AddEventListenerOptions, EventListenerOrEventListenerObject } from '../core/event-types.js';
import { fetch } from '../fetch/fetch.js';
import { getGlobalOrigin } from '../fetch/global-origin.js';
import { parseMIMEType } from '../fetch/mime-type.js';
import { ErrorEvent, MessageEvent } from '../websocket/events.js';
import { eventSourceLimits } from './eventsource-options.js';
import { EventSizeExceededError, EventStreamParser } from './event-stream-parser.js';

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;

/** The reconnection time before a server sets one (Chrome's and undici's 3 s). */
const defaultReconnectionTime = 3000;
// The longest delay setTimeout honours; longer ones fire after 1 ms.
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface EventSourceInit {
  withCredentials?: boolean;
  /** @deprecated use `node.dispatcher` */
  dispatcher?: Dispatcher;
  /** undici's extensions. */
  node?: {
    /** Default: `dispatcher`, else the global dispatcher. */
    dispatcher?: Dispatcher;
    /** ms to wait before reconnecting until the server sends `retry`. Default: 3000. */
    reconnectionTime?: number;
  };
}

// undici types `error` as ErrorEvent; what fires is a plain Event, as its is.
export interface EventSourceEventMap {
  error: ErrorEvent;
  message: MessageEvent;
  open: Event;
}

type HandlerName = keyof EventSourceEventMap;
type Handler<K extends HandlerName> = ((this: EventSource, ev: EventSourceEventMap[K]) => unknown) | null;

/** WebIDL `unsigned long`: non-finite is 0, fractions truncate, wrapping modulo 2^32. */
function unsignedLong(value: unknown): number {
  const n = Number(value);
  if (!Number.isFinite(n)) return 0;
  const t = Math.trunc(n) % 2 ** 32;
  return t < 0 ? t + 2 ** 32 : t;
}

function checkDispatcher(value: unknown, name: string): Dispatcher | undefined {
  if (value == null) return undefined;
  if (typeof (value as { dispatch?: unknown }).dispatch !== 'function') throw new InvalidArgumentError(`${name} must be a Dispatcher`);
  return value as Dispatcher;
}

/** Last-Event-ID as header bytes (UTF-8 read as latin1); null when it cannot be a header value. */
function lastEventIdHeader(id: string): string | null {
  if (id === '') return null;
  const value = Buffer.from(id, 'utf8').toString('latin1');
  // A value with a line break, NUL or edge whitespace is left out rather than altered (undici too).
  return /[\r\n\0]|^[\t ]|[\t ]$/.test(value) ? null : value;
}

function isEventStream(contentType: string | null): boolean {
  if (contentType === null) return false;
  const mime = parseMIMEType(contentType);
  return mime !== 'failure' && mime.essence === 'text/event-stream';
}

export class EventSource extends EventTarget {
  // On the constructor and the prototype, read-only (below), as WebIDL constants are.
  declare static readonly CONNECTING: 0;
  declare static readonly OPEN: 1;
  declare static readonly CLOSED: 2;
  declare readonly CONNECTING: 0;
  declare readonly OPEN: 1;
  declare readonly CLOSED: 2;
  // Event handler attributes, defined on the prototype (below).
  declare onopen: Handler<'open'>;
  declare onmessage: Handler<'message'>;
  declare onerror: Handler<'error'>;

  readonly #url: string;
  /** Where requests go: the URL without its credentials, which go in Authorization on a 401. */
  readonly #requestUrl: URL;
  readonly #authorization: string | null;
  readonly #withCredentials: boolean;
  readonly #dispatcher: Dispatcher;
  #readyState: 0 | 1 | 2 = CONNECTING;
  #reconnectionTime: number;
  #lastEventId = '';
  /** The origin events come from: the final URL's, after redirects. */
  #origin: string;
  /** Aborts the current request (and its body read); replaced per connection. */
  #abort: AbortController | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(url: string | URL, init?: EventSourceInit) {
    super();
    if (arguments.length === 0) throw new TypeError("Failed to construct 'EventSource': 1 argument required, but only 0 present.");
    if (init != null && typeof init !== 'object') throw new TypeError("Failed to construct 'EventSource': eventSourceInitDict is not an object.");
    const node = init?.node;
    if (node != null && typeof node !== 'object') throw new TypeError("Failed to construct 'EventSource': eventSourceInitDict.node is not an object.");
    this.#dispatcher = checkDispatcher(node?.dispatcher, 'node.dispatcher') ?? checkDispatcher(init?.dispatcher, 'dispatcher') ?? getGlobalDispatcher();
    this.#reconnectionTime = node?.reconnectionTime === undefined ? defaultReconnectionTime : unsignedLong(node.reconnectionTime);
    // WebIDL boolean: any value, by its truthiness.
    this.#withCredentials = Boolean(init?.withCredentials);

    let record: URL;
    try {
      record = new URL(String(url), getGlobalOrigin());
    } catch (err) {
      throw new DOMException((err as Error).message, 'SyntaxError');
    }
    this.#url = record.href;
    this.#origin = record.origin;
    // Node's Request refuses a URL with credentials; they are sent after a challenge instead
    // (the Fetch standard's use-URL-credentials flag, which EventSource requests have).
    if (record.username !== '' || record.password !== '') {
      const user = decodeURIComponent(record.username);
      const pass = decodeURIComponent(record.password);
      this.#authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      record = new URL(record.href);
      record.username = '';
      record.password = '';
    } else {
      this.#authorization = null;
    }
    this.#requestUrl = record;
    this.#connect();
  }

  get readyState(): 0 | 1 | 2 {
    return this.#readyState;
  }
  get url(): string {
    return this.#url;
  }
  get withCredentials(): boolean {
    return this.#withCredentials;
  }

  /** Ends the connection, if any, and any reconnection; no event fires after it. */
  close(): void {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CLOSED;
    this.#abort?.abort();
    this.#abort = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #connect(): void {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CONNECTING;
    const abort = new AbortController();
    this.#abort = abort;
    this.#request(abort, null);
  }

  #request(abort: AbortController, authorization: string | null): void {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    const lastEventId = lastEventIdHeader(this.#lastEventId);
    if (lastEventId !== null) headers['last-event-id'] = lastEventId;
    if (authorization !== null) headers.authorization = authorization;
    fetch(this.#requestUrl, {
      headers,
      cache: 'no-store',
      mode: 'cors',
      credentials: this.#withCredentials ? 'include' : 'same-origin',
      redirect: 'follow',
      signal: abort.signal,
      dispatcher: this.#dispatcher,
    }).then(
      (res) =>
        // Nothing in reading the response is expected to throw; if something does, the connection
        // fails (an error event) rather than the process (an unhandled rejection).
        this.#onResponse(abort, authorization, res).catch(() => this.#fail()),
      () => {
        // A network error (the server unreachable, the connection refused or reset): try again later.
        if (!abort.signal.aborted) this.#reconnect();
      },
    );
  }

  async #onResponse(abort: AbortController, authorization: string | null, res: Response): Promise<void> {
    if (abort.signal.aborted) return void res.body?.cancel().catch(() => {});
    if (res.status === 401 && authorization === null && this.#authorization !== null && res.headers.has('www-authenticate')) {
      await res.body?.cancel().catch(() => {});
      return this.#request(abort, this.#authorization);
    }
    if (res.status !== 200 || !isEventStream(res.headers.get('content-type'))) {
      void res.body?.cancel().catch(() => {});
      return this.#fail();
    }
    this.#readyState = OPEN;
    this.dispatchEvent(new Event('open'));
    if (res.url !== '') this.#origin = new URL(res.url).origin;
    // A listener may have closed it.
    if (abort.signal.aborted || res.body === null) return;

    const { maxEventSize } = eventSourceLimits(this.#dispatcher);
    const parser = new EventStreamParser(
      {
        event: (e) => {
          if (this.#abort !== abort) return;
          this.dispatchEvent(new MessageEvent(e.type, { data: e.data, lastEventId: e.lastEventId, origin: this.#origin }));
        },
        retry: (ms) => {
          this.#reconnectionTime = ms;
        },
      },
      { maxEventSize, lastEventId: this.#lastEventId },
    );
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || abort.signal.aborted) break;
        parser.push(value);
        this.#lastEventId = parser.lastEventId;
      }
    } catch (err) {
      if (err instanceof EventSizeExceededError) {
        void reader.cancel(err).catch(() => {});
        return this.#fail();
      }
      // Otherwise the body broke off (a network error), or close() aborted it.
    }
    this.#lastEventId = parser.lastEventId;
    if (!abort.signal.aborted) this.#reconnect();
  }

  /** Fails the connection: closed, one error event, no reconnection. */
  #fail(): void {
    if (this.#readyState === CLOSED) return;
    this.close();
    this.dispatchEvent(new Event('error'));
  }

  /** Reestablishes the connection: an error event now, a new request after the reconnection time. */
  #reconnect(): void {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CONNECTING;
    this.#abort = null;
    this.dispatchEvent(new Event('error'));
    if (this.#readyState !== CONNECTING) return;
    // Not holding the process open by itself, as undici's timer does not.
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#readyState === CONNECTING) this.#connect();
    }, Math.min(this.#reconnectionTime, MAX_TIMER_MS)).unref();
  }
}

// The listener types by event name: declarations merged into the class (at run time the methods
// are EventTarget's own, so the prototype has none of its own, as undici's has not).
type Listener<K extends HandlerName> = (this: EventSource, ev: EventSourceEventMap[K]) => unknown;
export interface EventSource {
  addEventListener<K extends HandlerName>(type: K, listener: Listener<K>, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends HandlerName>(type: K, listener: Listener<K>, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

const constants = { CONNECTING, OPEN, CLOSED };
for (const target of [EventSource, EventSource.prototype]) {
  for (const [name, value] of Object.entries(constants)) {
    Object.defineProperty(target, name, { value, enumerable: true, writable: false, configurable: false });
  }
}
defineEventHandlerAttributes(EventSource.prototype, ['open', 'message', 'error']);
// WebIDL attributes and operations are enumerable; class syntax makes them not.
for (const name of ['close', 'readyState', 'url', 'withCredentials']) {
  Object.defineProperty(EventSource.prototype, name, { enumerable: true });
}
Object.defineProperty(EventSource.prototype, Symbol.toStringTag, { value: 'EventSource', configurable: true });
