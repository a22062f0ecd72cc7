// What Client and Pool share: one origin served by one engine pool. Validates and packs each
// request, hands it to the engine in one synchronous call, and keeps the busy / drain, close and
// destroy bookkeeping of the Dispatcher interface.
import { Readable } from 'node:stream';
import { bridge, createPool, forgetPool, scheduleFlush } from '../native/engine.js';
import type { NativePool } from '../native/binding.js';
import type { PoolSink } from '../native/events.js';
import { engineError, USER_ERROR } from '../native/error-codes.js';
import { ClientClosedError, ClientDestroyedError, InvalidArgumentError, RequestContentLengthMismatchError } from '../core/errors.js';
import { isToken, packHeaders, withQuery } from '../core/headers.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { Dispatcher } from './dispatcher.js';
import { answer, destroyArgs } from './lifecycle.js';
import { EngineRequest, type RequestOwner } from './engine-request.js';
import { nativeArgs, tlsConfig } from './tls-options.js';
import { Bridge, planConnector } from './bridge.js';
import type { ConnectFunction } from '../core/connector.js';
import type { DispatchHandler, DispatchOptions } from './types.js';
import { emptyStats, type PoolStats } from './stats.js';

export interface EngineDispatcherOptions {
  socketPath?: string | null;
  pipelining?: number;
  keepAliveTimeout?: number;
  keepAliveMaxTimeout?: number;
  keepAliveTimeoutThreshold?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
  connectTimeout?: number | null;
  maxHeaderSize?: number;
  maxResponseSize?: number;
  maxRequestsPerClient?: number;
  // Also every tls.connect option, for https origins (tls-options.ts).
  // A function (a custom connector, or buildConnector's result) makes the sockets (bridge.ts).
  connect?: ({ timeout?: number | null; socketPath?: string | null } & Record<string, unknown>) | ConnectFunction | null;
  /** Local address to connect from (served by Node's sockets). */
  localAddress?: string | null;
  tls?: Record<string, unknown> | null;
  allowH2?: boolean | null;
  maxCachedSessions?: number | null;
}

// Request flags understood by the engine (crates/engine/src/request.rs).
const IDEMPOTENT = 1;
const BLOCKING = 2;
const RESET = 4;
const UPGRADE = 8;
const STREAM_BODY = 16;

const DEFAULT_TIMEOUT = 300e3;
// Methods whose requests carry a payload: an empty one is still announced with content-length: 0.
const EXPECTS_PAYLOAD = new Set(['POST', 'PUT', 'PATCH']);

function optNumber(v: unknown, name: string, def: number, min = 0): number {
  if (v == null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
    throw new InvalidArgumentError(`invalid ${name}`);
  }
  return v;
}

function parseOrigin(url: unknown): URL {
  let u: URL;
  try {
    u = url instanceof URL ? url : new URL(String(url));
  } catch {
    throw new InvalidArgumentError('invalid url');
  }
  if (!/^https?:$/.test(u.protocol)) {
    throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
  }
  if (u.pathname !== '/' && u.pathname !== '' ) throw new InvalidArgumentError('invalid url path');
  if (u.search || u.hash) throw new InvalidArgumentError('invalid url: search and hash are not allowed');
  return u;
}

function isStreamLike(b: unknown): b is Readable | AsyncIterable<unknown> | Iterable<unknown> {
  return (
    b instanceof Readable ||
    (typeof b === 'object' && b !== null &&
      (typeof (b as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
        typeof (b as Iterable<unknown>)[Symbol.iterator] === 'function'))
  );
}

type StreamBody = Readable | AsyncIterable<unknown> | Iterable<unknown>;

/** Feeds a streamed request body into the engine, waiting for its drain event when it is full. */
async function pumpBody(req: EngineRequest, body: StreamBody): Promise<void> {
  try {
    for await (const chunk of body as AsyncIterable<unknown>) {
      if (req.done) break;
      let buf: Buffer;
      if (typeof chunk === 'string') buf = Buffer.from(chunk);
      else if (chunk instanceof Uint8Array) buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      else throw new InvalidArgumentError('body chunks must be strings, Buffers or Uint8Arrays');
      if (buf.length === 0) continue;
      if (!req.writeBody(buf)) await req.drained();
    }
    if (!req.done) req.endBody();
  } catch (err) {
    req.abort(err as Error);
  } finally {
    // An abandoned source must not keep its resources (undici destroys the body stream too).
    if (req.aborted && body instanceof Readable && !body.destroyed) body.destroy();
  }
}

export class EngineDispatcher extends Dispatcher implements PoolSink, RequestOwner {
  readonly #origin: URL;
  readonly #host: string;
  readonly #native: NativePool;
  readonly #capacity: number;
  readonly #headersTimeout: number;
  readonly #bodyTimeout: number;
  readonly #requests = new Set<EngineRequest>();
  #needDrain = false;
  #closed = false;
  #destroyed = false;
  #closeWaiters: (() => void)[] = [];
  #connected = 0;
  /** Set when connections are Node sockets from a connector (bridge.ts). */
  readonly #bridge: Bridge | null;

  protected constructor(url: string | URL, opts: EngineDispatcherOptions, connections: number) {
    super();
    if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('invalid options');
    this.#origin = parseOrigin(url);
    this.#host = this.#origin.host;
    const pipelining = optNumber(opts.pipelining, 'pipelining', 1);
    this.#headersTimeout = optNumber(opts.headersTimeout, 'headersTimeout', DEFAULT_TIMEOUT);
    this.#bodyTimeout = optNumber(opts.bodyTimeout, 'bodyTimeout', DEFAULT_TIMEOUT);
    // `base`: the options whose TLS / socket settings apply (none for a buildConnector result).
    const { base, connect, bridged, engineTls } = planConnector(this.#origin, opts as Record<string, unknown>);
    const socketPath = base.socketPath ?? connect.socketPath ?? null;
    if (socketPath != null && typeof socketPath !== 'string') throw new InvalidArgumentError('invalid socketPath');
    const tls = this.#origin.protocol === 'https:' && (bridged === null || engineTls === true) ? tlsConfig(base, connect) : undefined;
    const connectTimeout = optNumber(base.connectTimeout ?? connect.timeout, 'connectTimeout', 10e3);
    const localAddress = opts.localAddress ?? null;
    if (localAddress !== null && typeof localAddress !== 'string') throw new InvalidArgumentError('invalid localAddress');
    this.#bridge = bridged === null ? null : new Bridge(this.#origin, bridged, localAddress);
    const maxResponseSize = opts.maxResponseSize == null ? -1 : optNumber(opts.maxResponseSize, 'maxResponseSize', -1, -1);
    this.#capacity = connections === 0 ? Infinity : connections * Math.max(1, pipelining);
    this.#native = nativeArgs(() => createPool(
      {
        host: this.#origin.hostname,
        port: Number(this.#origin.port) || (this.#origin.protocol === 'https:' ? 443 : 80),
        socketPath: socketPath ?? undefined,
        connections,
        pipelining,
        connectTimeout,
        keepAliveTimeout: optNumber(opts.keepAliveTimeout, 'keepAliveTimeout', 4e3),
        keepAliveMaxTimeout: optNumber(opts.keepAliveMaxTimeout, 'keepAliveMaxTimeout', 600e3, 1),
        keepAliveTimeoutThreshold: optNumber(opts.keepAliveTimeoutThreshold, 'keepAliveTimeoutThreshold', 2e3),
        maxHeaderSize: optNumber(opts.maxHeaderSize, 'maxHeaderSize', 16384, 1),
        maxResponseSize,
        maxRequestsPerClient: optNumber(opts.maxRequestsPerClient, 'maxRequestsPerClient', 0),
        tls,
        bridged: bridged !== null,
        // undici's connector turns TCP keep-alive on (60 s) unless `keepAlive: false`.
        tcpKeepAlive: connect.keepAlive === false ? -1 : optNumber(connect.keepAliveInitialDelay, 'keepAliveInitialDelay', 60e3),
      },
      this,
    ));
  }

  get closed(): boolean {
    return this.#closed;
  }
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /** Connections and requests right now (undici's PoolStats / ClientStats fields). */
  get stats(): PoolStats {
    if (this.#destroyed) return emptyStats();
    const { connected, free, queued } = this.#native.stats();
    // The engine knows what is queued; everything else this dispatcher still owns is in flight.
    const size = this.#requests.size;
    const pending = Math.min(queued, size);
    return { connected, free, pending, queued: pending, running: size - pending, size };
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (handler === null || typeof handler !== 'object') throw new InvalidArgumentError('handler must be an object');
    const req = new EngineRequest(this, toControllerHandler(handler));
    this.#requests.add(req);
    try {
      if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object.');
      if (this.#destroyed) throw new ClientDestroyedError();
      if (this.#closed) throw new ClientClosedError();
      const body = opts.body;
      if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
        if (!isStreamLike(body)) throw new InvalidArgumentError('body must be a string, a Buffer, a Readable stream or an iterable');
        this.#send(req, opts, null, body);
      } else {
        this.#send(req, opts, body == null ? null : typeof body === 'string' ? Buffer.from(body) : body, null);
      }
    } catch (err) {
      req.fail(err as Error);
      return false;
    }
    if (this.#requests.size >= this.#capacity) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  #send(req: EngineRequest, opts: DispatchOptions, body: Uint8Array | null, stream: StreamBody | null): void {
    if (req.done) return;
    const method = opts.method;
    if (typeof method !== 'string' || !isToken(method)) throw new InvalidArgumentError('invalid request method');
    let path = opts.path;
    if (typeof path !== 'string') throw new InvalidArgumentError('path must be a string');
    const connect = method === 'CONNECT';
    // CONNECT names an authority (host:port), not a path.
    if (!connect && path[0] !== '/' && !/^https?:\/\//.test(path) && !(method === 'OPTIONS' && path === '*')) {
      throw new InvalidArgumentError('path must be an absolute URL or start with a slash');
    }
    path = withQuery(path, opts.query);
    if (/[^\u0021-\u00ff]/.test(path)) throw new InvalidArgumentError('invalid request path');
    const h = packHeaders(opts.headers);
    let buf: Buffer | null =
      body === null ? null : Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (buf === null && stream === null && EXPECTS_PAYLOAD.has(method)) buf = Buffer.alloc(0);
    if (stream === null && h.contentLength !== null && (buf?.length ?? 0) !== h.contentLength) {
      throw new RequestContentLengthMismatchError();
    }
    let extra = '';
    if (opts.upgrade != null) {
      if (typeof opts.upgrade !== 'string' || !/^[\x21-\x7e][\x20-\x7e]*$/.test(opts.upgrade)) {
        throw new InvalidArgumentError('invalid upgrade header');
      }
      extra = `connection\0upgrade\0upgrade\0${opts.upgrade}\0`;
    }
    let flags = 0;
    if (opts.idempotent ?? (method === 'GET' || method === 'HEAD')) flags |= IDEMPOTENT;
    if (opts.blocking ?? method !== 'HEAD') flags |= BLOCKING;
    if (opts.reset === true || h.reset) flags |= RESET;
    // Upgrades and CONNECT take the connection over: never pipelined, never reused.
    if (opts.upgrade != null || connect) flags |= UPGRADE;
    if (stream !== null) flags |= STREAM_BODY;
    const head = `${method}\0${path}\0host\0${h.host ?? this.#host}\0${h.packed}${extra}`;
    const headersTimeout = opts.headersTimeout ?? this.#headersTimeout;
    const bodyTimeout = opts.bodyTimeout ?? this.#bodyTimeout;
    req.start();
    if (req.done) return;
    const bodyLength = stream !== null ? (h.contentLength ?? -1) : -1;
    if (!this.#native.dispatch(req.id, head, buf, flags, headersTimeout, bodyTimeout, bodyLength)) {
      req.fail(new ClientDestroyedError());
      return;
    }
    // A pause from onRequestStart came before the engine knew the request: pass it on now.
    if (req.paused) req.syncPause();
    scheduleFlush(this.#native);
    if (stream !== null) void pumpBody(req, stream);
  }

  requestDone(req: EngineRequest): void {
    this.#requests.delete(req);
    const size = this.#requests.size;
    if (this.#needDrain && size < this.#capacity) {
      this.#needDrain = false;
      queueMicrotask(() => this.emit('drain', this.#origin, [this]));
    }
    if (size === 0 && this.#closeWaiters.length > 0) this.#finishClose();
  }

  #finishClose(): void {
    this.#native.destroy();
    forgetPool(this.#native);
    this.#bridge?.destroy();
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    for (const w of waiters) w();
  }

  close(): Promise<void>;
  close(callback: (err: Error | null, data: null) => void): void;
  close(callback?: (err: Error | null, data: null) => void): Promise<void> | void {
    if (callback !== undefined && typeof callback !== 'function') throw new InvalidArgumentError('invalid callback');
    const done = new Promise<void>((resolve) => {
      if (this.#destroyed) return queueMicrotask(resolve);
      this.#closeWaiters.push(resolve);
      if (!this.#closed) {
        this.#closed = true;
        this.#native.close();
      }
      if (this.#requests.size === 0) queueMicrotask(() => this.#finishClose());
    });
    return answer(done, callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: (err: Error | null, data: null) => void): void;
  destroy(err: Error | null, callback: (err: Error | null, data: null) => void): void;
  destroy(a?: unknown, b?: unknown): Promise<void> | void {
    const [given, callback] = destroyArgs(a, b);
    if (callback !== undefined && typeof callback !== 'function') throw new InvalidArgumentError('invalid callback');
    const err = given ?? new ClientDestroyedError();
    const done = new Promise<void>((resolve) => {
      if (this.#destroyed) return queueMicrotask(resolve);
      this.#destroyed = true;
      this.#closed = true;
      this.#native.destroy();
      forgetPool(this.#native);
      this.#bridge?.destroy();
      const pending = [...this.#requests];
      // Requests fail asynchronously (spec: destroy aborts pending and running requests asynchronously).
      queueMicrotask(() => {
        for (const r of pending) r.fail(err);
        const waiters = this.#closeWaiters;
        this.#closeWaiters = [];
        for (const w of waiters) w();
        resolve();
      });
    });
    return answer(done, callback);
  }

  onEngineConnected(): void {
    this.#connected++;
    this.emit('connect', this.#origin, [this]);
  }

  onEngineDisconnected(code: number, message: string): void {
    this.#connected = Math.max(0, this.#connected - 1);
    this.emit('disconnect', this.#origin, [this], engineError(code, '', message));
  }

  onEngineConnectFailed(code: number, errno: string, message: string): void {
    const err = engineError(code, errno, message);
    if (code === USER_ERROR) this.#bridge?.delivered(message);
    this.emit('connectionError', this.#origin, [this], err);
  }

  onEngineBridgeOpen(bridgeId: number): void {
    if (this.#bridge !== null) this.#bridge.open(bridgeId);
    else bridgeFail(bridgeId);
  }
}

/** BRIDGE_OPEN for a pool that has no connector: cannot happen; fail it rather than hang. */
function bridgeFail(id: number): void {
  bridge.fail(id, 11, '', 'no connector for a bridged connection');
}
