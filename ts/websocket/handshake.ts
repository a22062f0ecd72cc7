// The opening handshake (RFC 6455 §4.1, WHATWG "establish a WebSocket connection"): URL and
// subprotocol validation, the upgrade request dispatched on any ferro dispatcher, and the checks
// of the server's 101 answer.
import { createHash, randomBytes } from 'node:crypto';
import { STATUS_CODES } from '../core/status-codes.js';
import { kDebugScope } from '../core/diagnostics.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DispatchController, DispatchHandler } from '../core/types.js';
import { binding } from '../native/binding.js';
import { kWebSocketSession } from '../dispatcher/engine/engine-socket.js';
import type { HeadersInit } from '../fetch/fetch-types.js';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** The `Sec-WebSocket-Extensions` offer (permessage-deflate, as browsers send it), the engine's. */
const extensionOffer: string = (binding as unknown as { websocketExtensionOffer(): string }).websocketExtensionOffer();
// RFC 7230 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The URL a WebSocket connects to; `http:` / `https:` become `ws:` / `wss:` as in undici. */
export function parseWebSocketUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new DOMException(`Invalid URL: ${String(input)}`, 'SyntaxError');
  }
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new DOMException(`Expected a ws: or wss: URL, got ${url.protocol}`, 'SyntaxError');
  }
  if (url.hash !== '' || String(input).endsWith('#')) {
    throw new DOMException('A WebSocket URL cannot have a fragment', 'SyntaxError');
  }
  return url;
}

/** Subprotocols as a list; repeated or malformed names are a SyntaxError. */
export function parseProtocols(protocols: string | readonly string[] | undefined | null): string[] {
  if (protocols == null) return [];
  const list = typeof protocols === 'string' ? [protocols] : Array.from(protocols, String);
  const seen = new Set<string>();
  for (const p of list) {
    if (!TOKEN.test(p)) throw new DOMException(`Invalid subprotocol ${JSON.stringify(p)}`, 'SyntaxError');
    if (seen.has(p)) throw new DOMException(`Repeated subprotocol ${JSON.stringify(p)}`, 'SyntaxError');
    seen.add(p);
  }
  return list;
}

export interface Handshake {
  url: URL;
  protocols: string[];
  headers: HeadersInit | null | undefined;
  dispatcher: Dispatcher;
}

/** The server's 101 as undici's `websocket:open` diagnostics message shows it. */
interface HandshakeResponse {
  status: number;
  statusText: string;
  /** Lower-case names; repeated fields joined with ', '. */
  headers: Record<string, string>;
}

interface HandshakeResult {
  socket: Duplex;
  protocol: string;
  extensions: string;
  response: HandshakeResponse;
}

function single(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

/** What is wrong with the server's 101 answer, or null when it is acceptable (RFC 6455 §4.1). */
function checkAnswer(h: IncomingHttpHeaders, key: string, protocols: string[]): string | null {
  if (single(h, 'upgrade').toLowerCase() !== 'websocket') return 'the Upgrade header is not "websocket"';
  const connection = single(h, 'connection').toLowerCase().split(',').map((s) => s.trim());
  if (!connection.includes('upgrade')) return 'the Connection header does not contain "upgrade"';
  const accept = createHash('sha1').update(key + ACCEPT_GUID).digest('base64');
  if (single(h, 'sec-websocket-accept') !== accept) return 'the Sec-WebSocket-Accept header is wrong';
  const protocol = single(h, 'sec-websocket-protocol');
  if (protocol !== '' && !protocols.includes(protocol)) return `the server chose an unoffered subprotocol ${protocol}`;
  return null;
}

type Settle = (err: Error | null, result: HandshakeResult | null) => void;

/** The engine's refusal of an upgrade on an HTTP/2 connection. */
const H2_REFUSED = /upgrade is not supported over HTTP\/2/;

/** Ends an attempt answered 401 so that it is made again with the URL's credentials. */
class Unauthorized extends Error {}

class HandshakeHandler implements DispatchHandler {
  #controller: DispatchController | null = null;
  #abortReason: Error | null = null;
  #settle: Settle | null;
  readonly #key: string;
  readonly #protocols: string[];
  /** A 401 ends this attempt with Unauthorized (the URL has credentials not yet sent). */
  readonly #retryOn401: boolean;

  constructor(key: string, protocols: string[], retryOn401: boolean, settle: Settle) {
    this.#key = key;
    this.#protocols = protocols;
    this.#retryOn401 = retryOn401;
    this.#settle = settle;
  }

  abort(reason: Error): void {
    if (this.#controller !== null) this.#controller.abort(reason);
    else this.#abortReason = reason;
  }

  #finish(err: Error | null, result: HandshakeResult | null): void {
    const settle = this.#settle;
    this.#settle = null;
    settle?.(err, result);
  }

  onRequestStart(controller: DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== null) controller.abort(this.#abortReason);
  }

  onRequestUpgrade(_c: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    const problem = statusCode !== 101 ? `status ${statusCode}` : checkAnswer(headers, this.#key, this.#protocols);
    if (this.#settle === null || problem !== null) {
      socket.destroy();
      this.#finish(new TypeError(`WebSocket handshake failed: ${problem ?? 'aborted'}`), null);
      return;
    }
    const protocol = single(headers, 'sec-websocket-protocol');
    const all: Record<string, string> = {};
    for (const name of Object.keys(headers)) all[name] = single(headers, name);
    const response = { status: statusCode, statusText: STATUS_CODES[statusCode] ?? '', headers: all };
    this.#finish(null, { socket, protocol, extensions: single(headers, 'sec-websocket-extensions'), response });
  }

  onResponseStart(controller: DispatchController, statusCode: number): void {
    if (statusCode < 200) return;
    if (statusCode === 401 && this.#retryOn401) return controller.abort(new Unauthorized());
    controller.abort(new TypeError(`WebSocket handshake failed: the server answered ${statusCode}`));
  }

  onResponseData(): void {}
  onResponseEnd(): void {}

  onResponseError(_c: DispatchController, err: Error): void {
    this.#finish(err, null);
  }
}

/**
 * The request headers: the caller's (names as given, as undici forwards them; Headers checks
 * them), then the handshake's own.
 */
function requestHeaders(init: HeadersInit | null | undefined, key: string, protocols: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (init != null) {
    const checked = new Headers(init as ConstructorParameters<typeof Headers>[0]);
    // A record or a list keeps its spelling; a Headers object has only lower-case names.
    const given: Iterable<readonly [string, string]> =
      init instanceof Headers ? checked : Array.isArray(init) ? (init as [string, string][]) : Object.entries(init as Record<string, string>);
    const spelled = new Map<string, string>();
    for (const [name] of given) if (!spelled.has(name.toLowerCase())) spelled.set(name.toLowerCase(), name);
    // Headers joins a repeated name's values with ', ', as undici's header list does.
    checked.forEach((value, name) => (headers[spelled.get(name) ?? name] = value));
  }
  headers['sec-websocket-key'] = key;
  headers['sec-websocket-version'] = '13';
  headers['sec-websocket-extensions'] = extensionOffer;
  if (protocols.length > 0) headers['sec-websocket-protocol'] = protocols.join(', ');
  return headers;
}

/** `Basic` credentials from the URL's user info, or null when it has none. */
function urlCredentials(url: URL): string | null {
  if (url.username === '' && url.password === '') return null;
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

/**
 * Sends the upgrade request; `settle` gets the socket or why there is none. Returns an abort.
 * Credentials in the URL are sent only when the server answers 401, once (the Fetch standard's
 * use-URL-credentials flag, which the handshake's request has).
 */
export function openHandshake(h: Handshake, settle: Settle): (reason: Error) => void {
  const key = randomBytes(16).toString('base64');
  const credentials = urlCredentials(h.url);
  const origin = `${h.url.protocol === 'wss:' ? 'https:' : 'http:'}//${h.url.host}`;
  let handler: HandshakeHandler;
  const attempt = (authorization: string | null, h1Only: boolean): void => {
    const headers = requestHeaders(h.headers, key, h.protocols);
    // The caller's own Authorization header wins: the URL's credentials are then never sent.
    const own = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    if (authorization !== null && !own) headers.authorization = authorization;
    handler = new HandshakeHandler(key, h.protocols, credentials !== null && authorization === null && !own, (err, result) => {
      if (err instanceof Unauthorized) return attempt(credentials, h1Only);
      // The origin's connection speaks HTTP/2, which cannot carry the upgrade: once more on an
      // HTTP/1.1 connection (undici's fallback when extended CONNECT is unavailable).
      if (err !== null && !h1Only && H2_REFUSED.test(err.message)) return attempt(authorization, true);
      settle(err, result);
    });
    const request = {
      origin,
      path: h.url.pathname + h.url.search,
      method: 'GET' as const,
      headers,
      upgrade: 'websocket',
      body: null,
      // The handshake's own request lines print under NODE_DEBUG=websocket.
      [kDebugScope]: 'websocket',
      // The engine's WebSocket session takes the connection once the answer checks out.
      [kWebSocketSession]: true,
      ...(h1Only ? { allowH2: false } : null),
    };
    try {
      h.dispatcher.dispatch(request, handler);
    } catch (err) {
      queueMicrotask(() => settle(err as Error, null));
    }
  };
  attempt(null, false);
  return (reason) => handler.abort(reason);
}
