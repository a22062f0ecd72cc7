// What Client and Pool share: one origin served by one engine pool. Validates and packs each
// request, hands it to the engine in one synchronous call, and keeps the busy / drain, close and
// destroy bookkeeping of the Dispatcher interface.
import { bridge, createPool, engineKind, forgetPool, scheduleFlush, type EngineKind } from '../native/engine.js';
import { h2PoolConfig, type H2Options } from './h2-options.js';
import type { NativePool } from '../native/binding.js';
import type { PoolSink } from '../native/events.js';
import { engineError, USER_ERROR } from '../native/error-codes.js';
import { ClientClosedError, ClientDestroyedError, InvalidArgumentError, RequestContentLengthMismatchError } from '../core/errors.js';
import { isToken, packHeaders, withQuery } from '../core/headers.js';
import { assertRequestHandler, checkRequestOptions } from '../core/request.js';
import { parseOrigin, type UrlObject } from '../core/url.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { resolveBodyFactory } from '../handler/replayable-body.js';
import { Dispatcher } from './dispatcher.js';
import { answer, destroyArgs, refuse } from './lifecycle.js';
import { EngineRequest, type RequestOwner } from './engine-request.js';
import { pumpBody } from './body-pump.js';
import { requestBodyParts, type RequestBodyParts } from '../core/request-body.js';
import { nativeArgs, tlsConfig } from './tls-options.js';
import { Bridge, planConnector } from './bridge.js';
import type { ConnectFunction } from '../core/connector.js';
import type { DispatchHandler, DispatchOptions } from './types.js';
import { emptyStats, type PoolStats } from './stats.js';
import { connectionEvents, observeRequest } from '../core/diagnostics.js';
import '../core/debug.js'; // NODE_DEBUG output: subscribes to the lib: channels when a flag is on

export interface EngineDispatcherOptions {
  socketPath?: string | null;
  pipelining?: number;
  /** false: a body whose length differs from its content-length header is sent with a warning. */
  strictContentLength?: boolean;
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
  /** HTTP/2 session settings (h2-options.ts); the top-level names are undici's deprecated ones. */
  h2Options?: H2Options | null;
  maxConcurrentStreams?: number;
  initialWindowSize?: number;
  connectionWindowSize?: number;
  pingInterval?: number;
  useH2c?: boolean;
  /**
   * How the engine is driven (docs/performance.md): `'inline'` on this thread's event loop,
   * `'threaded'` on a thread of its own. Default: `FERRO_ENGINE`, else chosen for the machine.
   */
  engine?: 'inline' | 'threaded';
}

// Request flags understood by the engine (crates/engine/src/request.rs).
const IDEMPOTENT = 1;
const BLOCKING = 2;
const RESET = 4;
const UPGRADE = 8;
const STREAM_BODY = 16;
const OBSERVE = 32;
const EXPECT_CONTINUE = 64;

const DEFAULT_TIMEOUT = 300e3;
// Methods whose requests carry a payload: an empty one is still announced with content-length: 0.
const EXPECTS_PAYLOAD = new Set(['POST', 'PUT', 'PATCH']);
// Methods whose content-length undici never checks against the body.
const NO_LENGTH = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT']);

function optNumber(v: unknown, name: string, def: number, min = 0): number {
  if (v == null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
    throw new InvalidArgumentError(`invalid ${name}`);
  }
  return v;
}

export class EngineDispatcher extends Dispatcher implements PoolSink, RequestOwner {
  readonly #origin: URL;
  /** The engine driver this dispatcher's requests run on. */
  readonly engine: EngineKind;
  readonly #host: string;
  readonly #native: NativePool;
  #capacity: number;
  /** The capacity once a connection turns out to be an h2 session. */
  readonly #h2Capacity: number;
  /** What the last connection spoke, for the next connection's debug line. */
  #version: 'h1' | 'h2' = 'h1';
  readonly #headersTimeout: number;
  readonly #bodyTimeout: number;
  readonly #strictContentLength: boolean;
  readonly #requests = new Set<EngineRequest>();
  #needDrain = false;
  #closed = false;
  #destroyed = false;
  #closeWaiters: (() => void)[] = [];
  #connected = 0;
  /** Set when connections are Node sockets from a connector (bridge.ts). */
  readonly #bridge: Bridge | null;

  protected constructor(url: string | URL | UrlObject, opts: EngineDispatcherOptions, connections: number) {
    super();
    if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('invalid options');
    this.#origin = parseOrigin(url);
    this.engine = engineKind(opts.engine);
    this.#host = this.#origin.host;
    // pipelining: 0 is undici's way to turn keep-alive off: one request per connection.
    const noKeepAlive = opts.pipelining === 0;
    const pipelining = noKeepAlive ? 1 : optNumber(opts.pipelining, 'pipelining', 1);
    if (opts.strictContentLength != null && typeof opts.strictContentLength !== 'boolean') {
      throw new InvalidArgumentError('invalid strictContentLength');
    }
    this.#strictContentLength = opts.strictContentLength !== false;
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
    const h2 = h2PoolConfig(opts as Record<string, unknown>);
    this.#h2Capacity = connections === 0 ? Infinity : connections * h2.maxConcurrentStreams;
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
        maxRequestsPerClient: noKeepAlive ? 1 : optNumber(opts.maxRequestsPerClient, 'maxRequestsPerClient', 0),
        tls,
        bridged: bridged !== null,
        // undici's connector turns TCP keep-alive on (60 s) unless `keepAlive: false`.
        tcpKeepAlive: connect.keepAlive === false ? -1 : optNumber(connect.keepAliveInitialDelay, 'keepAliveInitialDelay', 60e3),
        ...h2,
      },
      this,
      this.engine,
    ));
  }

  protected override get composeOrigin(): string {
    return this.#origin.origin;
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
    const driven = toControllerHandler(handler);
    try {
      assertRequestHandler(driven, opts?.method, opts?.upgrade);
    } catch (err) {
      // As undici: a handler that can hear the error hears it; otherwise the call throws.
      if (typeof driven.onResponseError !== 'function') throw err;
      driven.onResponseError(null as never, err as Error);
      return false;
    }
    const req = new EngineRequest(this, driven);
    this.#requests.add(req);
    try {
      if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object.');
      checkRequestOptions(opts);
      if (this.#destroyed) throw new ClientDestroyedError();
      if (this.#closed) throw new ClientClosedError();
      // A body factory (ts/handler/replayable-body.ts) makes a fresh body for each attempt.
      const body = typeof opts.body === 'function' ? resolveBodyFactory(opts.body) : opts.body;
      this.#send(req, opts, requestBodyParts(body));
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

  #send(req: EngineRequest, opts: DispatchOptions, body: RequestBodyParts): void {
    const stream = body.stream;
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
    // What the body's form implies (a Blob's type and size, a FormData boundary), unless set.
    if (body.contentType !== null && !h.contentType) h.packed += `content-type\0${body.contentType}\0`;
    if (body.length !== null && h.contentLength === null) h.contentLength = body.length;
    let buf = body.bytes;
    if (buf === null && stream === null && EXPECTS_PAYLOAD.has(method)) buf = Buffer.alloc(0);
    // undici's rule: only a non-empty body of a method that carries one must match its header;
    // with strictContentLength: false a mismatch is a warning and the body's own length is sent.
    const length = buf?.length ?? 0;
    if (stream === null && h.contentLength !== null && length > 0 && length !== h.contentLength && !NO_LENGTH.has(method)) {
      if (this.#strictContentLength) throw new RequestContentLengthMismatchError();
      process.emitWarning(new RequestContentLengthMismatchError());
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
    if (opts.expectContinue === true) flags |= EXPECT_CONTINUE;
    // Diagnostics channels and NODE_DEBUG (core/diagnostics.ts): null unless someone listens.
    const trace = observeRequest(this.#origin, opts, path, h.host ?? this.#host, h.packed, buf, stream !== null);
    if (trace !== null) {
      req.trace = trace;
      flags |= OBSERVE;
      extra += trace.takeAddedHeaders();
    }
    const head = `${method}\0${path}\0host\0${h.host ?? this.#host}\0${h.packed}${extra}`;
    const headersTimeout = opts.headersTimeout ?? this.#headersTimeout;
    const bodyTimeout = opts.bodyTimeout ?? this.#bodyTimeout;
    req.start();
    if (req.done) return;
    if (stream === null) {
      req.bodyComplete(buf);
      this.#hand(req, head, buf, flags, headersTimeout, bodyTimeout, -1);
      return;
    }
    void pumpBody(req, stream, (first) => {
      if (first !== null) {
        if (!this.#hand(req, head, null, flags, headersTimeout, bodyTimeout, h.contentLength ?? -1)) return false;
        if (first !== undefined) req.writeBody(first);
        return true;
      }
      // An empty source: a request without a body, framed as one.
      if (h.contentLength !== null && h.contentLength !== 0) {
        req.fail(new RequestContentLengthMismatchError());
        return false;
      }
      const empty = EXPECTS_PAYLOAD.has(method) ? Buffer.alloc(0) : null;
      req.bodyComplete(empty);
      return this.#hand(req, head, empty, flags & ~STREAM_BODY, headersTimeout, bodyTimeout, -1);
    });
  }

  /** Hands a packed request to the engine; false (and the request failed) when the pool is gone. */
  #hand(
    req: EngineRequest,
    head: string,
    buf: Buffer | null,
    flags: number,
    headersTimeout: number,
    bodyTimeout: number,
    bodyLength: number,
  ): boolean {
    if (!this.#native.dispatch(req.id, head, buf, flags, headersTimeout, bodyTimeout, bodyLength)) {
      req.fail(new ClientDestroyedError());
      return false;
    }
    // A pause from onRequestStart came before the engine knew the request: pass it on now.
    if (req.paused) req.syncPause();
    scheduleFlush(this.#native);
    return true;
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
    this.#destroyed = true;
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
    // As undici: a dispatcher that finished closing (or was destroyed) is destroyed.
    if (this.#destroyed) return refuse(new ClientDestroyedError(), callback);
    const done = new Promise<void>((resolve) => {
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

  onEngineConnecting(): void {
    // ALPN has not spoken yet: say what this origin's last connection turned out to speak.
    connectionEvents.connecting(this.#origin, this.#version);
  }

  onEngineConnected(info: string): void {
    connectionEvents.connected(this.#origin, info);
    this.#version = info.startsWith('h2|') ? 'h2' : 'h1';
    // An h2 session carries up to maxConcurrentStreams requests where an h1 connection carries
    // `pipelining`: busy / drain follow the streams.
    if (info.startsWith('h2|') && this.#h2Capacity > this.#capacity) this.#capacity = this.#h2Capacity;
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
    connectionEvents.connectError(this.#origin, 'h1', err);
    this.emit('connectionError', this.#origin, [this], err);
  }

  onEngineBridgeOpen(bridgeId: number): void {
    if (this.#bridge !== null) this.#bridge.open(bridgeId);
    else bridgeFail(bridgeId);
  }
}

/** BRIDGE_OPEN for a pool that has no connector: cannot happen; fail it rather than hang. */
function bridgeFail(id: number): void {
  bridge.current().fail(id, 11, '', 'no connector for a bridged connection');
}
