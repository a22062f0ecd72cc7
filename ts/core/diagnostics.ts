// The `lib:` diagnostics channels (node:diagnostics_channel), one per undici channel with the
// payload shapes undici documents, so tracing tools can observe ferro. A message is built and
// published only when its channel has subscribers: an unobserved process pays one cached boolean
// check per request (`observeRequest` returning null) and nothing per event.
// `publishUndiciChannels()` also publishes every message under undici's own names (`undici:*`), so
// tools written for undici (e.g. @opentelemetry/instrumentation-undici) work unchanged.
import dc from 'node:diagnostics_channel';
import { isIP } from 'node:net';
import { InvalidArgumentError } from './errors.js';
import { latin1Buffers, packHeaders } from './headers.js';
import { parseAddrs, type SocketAddresses } from '../native/addrs.js';
import type { DispatchOptions, IncomingHeaders } from './types.js';
import type { DiagnosticsChannel } from './diagnostics-channel.js';

/** Every channel, without its `lib:` (or `undici:`) prefix. */
export const CHANNELS = [
  'request:create',
  'request:bodyChunkSent',
  'request:bodySent',
  'request:headers',
  'request:bodyChunkReceived',
  'request:trailers',
  'request:error',
  'request:pending-requests',
  'client:sendHeaders',
  'client:beforeConnect',
  'client:connected',
  'client:connectError',
  'proxy:connected',
  'websocket:open',
  'websocket:close',
  'websocket:socket_error',
  'websocket:ping',
  'websocket:pong',
] as const;

export type ChannelName = (typeof CHANNELS)[number];

/**
 * The channels a request's messages go to (the client:sendHeaders one included); deduplicate's
 * pending-requests is not one: its subscribers need no per-request messages built.
 */
const REQUEST_CHANNELS: readonly ChannelName[] = CHANNELS.filter(
  (n) => (n.startsWith('request:') && n !== 'request:pending-requests') || n === 'client:sendHeaders',
);

/** Where `name` is published: its `lib:` channel, and its `undici:` twin when that is on. */
const targets = new Map<ChannelName, dc.Channel[]>(CHANNELS.map((n) => [n, [dc.channel(`lib:${n}`)]]));
/** The channels `observeRequest` looks at; rebuilt when undici names are switched on or off. */
let requestChannels: dc.Channel[] = [];
/**
 * Whether any request channel has subscribers, looked up once per JS tick: Node 20's
 * `hasSubscribers` costs ~10 ns a channel, too much to ask eight of them per request. The engine's
 * once-per-tick flush forgets the answer (native/engine.ts), so a subscription made now applies
 * from the next tick's requests.
 */
let observed: boolean | null = null;

function lookUp(): boolean {
  observed = false;
  for (const ch of requestChannels) {
    if (ch.hasSubscribers) {
      observed = true;
      break;
    }
  }
  return observed;
}

/** Called by the engine's per-tick flush: look subscriptions up again for the next requests. */
export function forgetObservation(): void {
  observed = null;
}

function rebuild(undici: boolean): void {
  for (const n of CHANNELS) {
    const list = [dc.channel(`lib:${n}`)];
    if (undici) list.push(dc.channel(`undici:${n}`));
    targets.set(n, list);
  }
  requestChannels = REQUEST_CHANNELS.flatMap((n) => targets.get(n)!);
  observed = null;
}
rebuild(false);

/**
 * Also publish every message under undici's channel names (`undici:request:create`, …), so tools
 * that subscribe to those (OpenTelemetry's undici instrumentation, for one) see ferro's requests.
 * `false` turns it off again.
 */
export function publishUndiciChannels(enabled = true): void {
  if (typeof enabled !== 'boolean') throw new InvalidArgumentError('enabled must be a boolean');
  rebuild(enabled);
}

/** Publishes `message` on every channel `name` maps to that has subscribers. */
export function publish(name: ChannelName, message: unknown): void {
  for (const ch of targets.get(name)!) if (ch.hasSubscribers) ch.publish(message);
}

/** True when some channel `name` maps to has subscribers (build costly payloads only then). */
export function hasSubscribers(name: ChannelName): boolean {
  for (const ch of targets.get(name)!) if (ch.hasSubscribers) return true;
  return false;
}

/** Who made a request, for debug output that is scoped to an API (`NODE_DEBUG=fetch`). */
/**
 * ferro's own channel, with no undici twin: `{ origin, queued }` when a request of an Agent with
 * `maxGlobalConnections` starts waiting for a connection, and as its origin's queue shrinks
 * (ts/dispatcher/global-cap.ts).
 */
export const poolQueueChannel = dc.channel('lib:pool:queue');

export type DebugScope = 'fetch' | 'websocket';
/** Set on dispatch options by fetch / WebSocket; interceptors copy it along with the options. */
export const kDebugScope: unique symbol = Symbol('ferro.debugScope');

/** Dispatch options that may carry the debug scope. */
export type ScopedOptions = { [kDebugScope]?: DebugScope };

/**
 * The `request` object of the request channels, with the members undici's Request shows to
 * subscribers: `origin`, `method`, `path`, `headers` (a flat name, value array), `addHeader`, ….
 */
export class DiagnosticsRequest implements DiagnosticsChannel.Request {
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  readonly headers: string[];
  readonly body: unknown;
  readonly idempotent: boolean;
  readonly blocking: boolean;
  readonly upgrade: string | null;
  completed = false;
  aborted = false;
  readonly [kDebugScope]: DebugScope | undefined;
  /** Headers added in `request:create`, packed for the engine; null once the head is built. */
  #added: string | null = '';
  /** Whether the body goes out in pieces (bodySent then comes from `bodyEnded`). */
  #streamed: boolean;
  #bodyBytes: Buffer | null;

  constructor(origin: URL, opts: DispatchOptions, path: string, host: string, packed: string, bodyBytes: Buffer | null, streamed: boolean) {
    const method = opts.method;
    this.origin = origin.origin;
    this.method = method;
    this.path = path;
    const headers = packed === '' ? [] : packed.slice(0, -1).split('\0');
    headers.unshift('host', host);
    this.headers = headers;
    this.body = opts.body ?? null;
    this.idempotent = opts.idempotent ?? (method === 'GET' || method === 'HEAD');
    this.blocking = opts.blocking ?? method !== 'HEAD';
    this.upgrade = opts.upgrade ?? null;
    this[kDebugScope] = (opts as ScopedOptions)[kDebugScope];
    this.#streamed = streamed;
    this.#bodyBytes = bodyBytes;
  }

  /** Adds a request header; only effective while `request:create` is being published. */
  addHeader(name: string, value: string): this {
    if (this.#added === null) throw new InvalidArgumentError('headers can only be added in request:create');
    const p = packHeaders([name, value]);
    if (p.packed === '') throw new InvalidArgumentError(`${String(name)} cannot be added here`);
    this.#added += p.packed;
    this.headers.push(String(name).toLowerCase(), String(value));
    return this;
  }

  /** The packed headers subscribers added; after this, addHeader throws. */
  /** The request went out on an HTTP/2 session (set when its head is sent). */
  #h2 = false;

  takeAddedHeaders(): string {
    const added = this.#added ?? '';
    this.#added = null;
    return added;
  }

  /** The head went out on a connection (engine SENT event); a whole body went with it. */
  sent(addrs: string): void {
    // TLS with ALPN h2 (prior-knowledge h2c is not told apart here: see docs/compatibility.md).
    this.#h2 = addrs.endsWith('|tls|h2');
    if (hasSubscribers('client:sendHeaders')) {
      let raw = '';
      for (let i = 0; i < this.headers.length; i += 2) raw += `${this.headers[i]}: ${this.headers[i + 1]}\r\n`;
      publish('client:sendHeaders', { request: this, headers: raw, socket: parseAddrs(addrs) } satisfies DiagnosticsChannel.ClientSendHeadersMessage);
    }
    if (this.#streamed) return;
    const body = this.#bodyBytes;
    if (body !== null && body.length > 0) publish('request:bodyChunkSent', { request: this, chunk: body });
    publish('request:bodySent', { request: this });
  }

  /** A piece of a streamed body was handed to the engine. */
  bodyChunk(chunk: Buffer): void {
    publish('request:bodyChunkSent', { request: this, chunk });
  }

  bodyEnded(): void {
    publish('request:bodySent', { request: this });
  }

  /** `headers` is the parsed object: undici's h2 client publishes the session's object, h1 the raw Buffers. */
  responseHeaders(statusCode: number, statusText: string, raw: string[], headers: IncomingHeaders): void {
    if (!hasSubscribers('request:headers')) return;
    publish('request:headers', {
      request: this,
      response: { statusCode, statusText, headers: this.#h2 ? { ...headers } : latin1Buffers(raw) },
    });
  }

  bodyChunkReceived(chunk: Buffer): void {
    publish('request:bodyChunkReceived', { request: this, chunk });
  }

  trailers(raw: string[]): void {
    this.completed = true;
    if (!hasSubscribers('request:trailers')) return;
    publish('request:trailers', { request: this, trailers: latin1Buffers(raw) });
  }

  error(error: Error, aborted: boolean): void {
    this.aborted = aborted;
    publish('request:error', { request: this, error });
  }
}

/**
 * Called once per request before its head is built: null (the common case) when no request
 * channel has subscribers; otherwise publishes `request:create` and returns the request object
 * the later messages carry. Headers subscribers add are then in `takeAddedHeaders()`.
 */
export function observeRequest(
  origin: URL,
  opts: DispatchOptions,
  path: string,
  host: string,
  packed: string,
  bodyBytes: Buffer | null,
  streamed: boolean,
): DiagnosticsRequest | null {
  if (!(observed ?? lookUp())) return null;
  const request = new DiagnosticsRequest(origin, opts, path, host, packed, bodyBytes, streamed);
  publish('request:create', { request });
  return request;
}

/** `connectParams` of the client channels, as undici fills them. */
export interface ConnectParams {
  host: string;
  hostname: string;
  protocol: string;
  port: string;
  version: string | undefined;
  servername: string | null;
  localAddress: string | null;
}

function connectParams(origin: URL, version: string | undefined): ConnectParams {
  const hostname = origin.hostname[0] === '[' ? origin.hostname.slice(1, -1) : origin.hostname;
  return {
    host: origin.host,
    hostname,
    protocol: origin.protocol,
    port: origin.port,
    version,
    // The SNI name a TLS connection sends by default (none for IP addresses); an explicit
    // `servername` option is not reflected here.
    servername: origin.protocol === 'https:' && isIP(hostname) === 0 ? hostname : null,
    localAddress: null,
  };
}

/** Connection messages for one origin's dispatcher (engine CONNECTING / CONNECTED / CONNECT_FAILED). */
export const connectionEvents = {
  connecting(origin: URL, version: string): void {
    if (hasSubscribers('client:beforeConnect')) {
      publish('client:beforeConnect', { connectParams: connectParams(origin, version), connector: null } satisfies DiagnosticsChannel.ClientBeforeConnectMessage);
    }
  },
  /** `info` is the engine's "<h1|h2>|<addrs>". */
  connected(origin: URL, info: string): void {
    if (!hasSubscribers('client:connected')) return;
    const bar = info.indexOf('|');
    const socket: SocketAddresses = parseAddrs(info.slice(bar + 1));
    publish('client:connected', { connectParams: connectParams(origin, info.slice(0, bar)), connector: null, socket } satisfies DiagnosticsChannel.ClientConnectedMessage);
  },
  connectError(origin: URL, version: string, error: Error): void {
    if (hasSubscribers('client:connectError')) {
      publish('client:connectError', { connectParams: connectParams(origin, version), connector: null, error } satisfies DiagnosticsChannel.ClientConnectErrorMessage);
    }
  },
};
