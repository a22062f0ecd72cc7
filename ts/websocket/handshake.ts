// The opening handshake (RFC 6455 §4.1, WHATWG "establish a WebSocket connection"): URL and
// subprotocol validation, the upgrade request dispatched on any ferro dispatcher, and the checks
// of the server's 101 answer.
import { createHash, randomBytes } from 'node:crypto';
import { kDebugScope } from '../core/diagnostics.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DispatchController, DispatchHandler } from '../core/types.js';
import { extensionOffer } from './native.js';
import type { HeadersInit } from '../fetch/fetch-types.js';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
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

export interface HandshakeResult {
  socket: Duplex;
  protocol: string;
  extensions: string;
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

class HandshakeHandler implements DispatchHandler {
  #controller: DispatchController | null = null;
  #abortReason: Error | null = null;
  #settle: Settle | null;
  readonly #key: string;
  readonly #protocols: string[];

  constructor(key: string, protocols: string[], settle: Settle) {
    this.#key = key;
    this.#protocols = protocols;
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
    this.#finish(null, { socket, protocol, extensions: single(headers, 'sec-websocket-extensions') });
  }

  onResponseStart(controller: DispatchController, statusCode: number): void {
    if (statusCode < 200) return;
    controller.abort(new TypeError(`WebSocket handshake failed: the server answered ${statusCode}`));
  }

  onResponseData(): void {}
  onResponseEnd(): void {}

  onResponseError(_c: DispatchController, err: Error): void {
    this.#finish(err, null);
  }
}

/** Sends the upgrade request; `settle` gets the socket or why there is none. Returns an abort. */
export function openHandshake(h: Handshake, settle: Settle): (reason: Error) => void {
  const key = randomBytes(16).toString('base64');
  const headers: Record<string, string> = {};
  // Node's Headers joins an array value with ', ', as undici's does for a HeaderRecord.
  if (h.headers != null) new Headers(h.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => (headers[name] = value));
  headers['sec-websocket-key'] = key;
  headers['sec-websocket-version'] = '13';
  headers['sec-websocket-extensions'] = extensionOffer;
  if (h.protocols.length > 0) headers['sec-websocket-protocol'] = h.protocols.join(', ');
  const handler = new HandshakeHandler(key, h.protocols, settle);
  const origin = `${h.url.protocol === 'wss:' ? 'https:' : 'http:'}//${h.url.host}`;
  try {
    h.dispatcher.dispatch(
      // kDebugScope: the handshake's own request lines print under NODE_DEBUG=websocket.
      { origin, path: h.url.pathname + h.url.search, method: 'GET', headers, upgrade: 'websocket', body: null, [kDebugScope]: 'websocket' },
      handler,
    );
  } catch (err) {
    queueMicrotask(() => settle(err as Error, null));
  }
  return (reason) => handler.abort(reason);
}
