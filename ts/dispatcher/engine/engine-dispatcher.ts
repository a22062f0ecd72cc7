// What Client and Pool share: one origin served by one engine pool. dispatch() checks and packs
// each request (core/request.ts) and hands it to the engine in one synchronous call; this class
// keeps the requests in flight for busy / drain, close and destroy. Options: pool-options.ts;
// connection events: pool-events.ts.
import { closeRequest, createPool, engineKind, forgetPool, openSinks, scheduleFlush, type EngineKind } from '../../native/engine.js';
import type { NativePool, PoolConfig } from '../../native/binding.js';
import { RequestFlag } from '../../native/events.js';
import { kWebSocketSession } from './engine-socket.js';
import { ClientDestroyedError, InformationalError, InvalidArgumentError, RequestContentLengthMismatchError } from '../../core/errors.js';
import { assertRequestHandler, checkRequestLine, checkRequestOptions, emptyBodyFor, packRequest, type PackedRequest } from '../../core/request.js';
import { detachedController } from '../../handler/detached-controller.js';
import { requestBodyParts } from '../../core/request-body.js';
import type { DispatchHandler, DispatchOptions } from '../../core/types.js';
import { parseOrigin, type UrlObject } from '../../core/url.js';
import { observeRequest } from '../../core/diagnostics.js';
import '../../core/debug.js'; // NODE_DEBUG output: subscribes to the lib: channels when a flag is on
import { toControllerHandler } from '../../handler/legacy-handler.js';
import { resolveBodyFactory } from '../../handler/replayable-body.js';
import { DispatcherBase } from '../dispatcher-base.js';
import { emptyStats, type ClientStats, type PoolStats } from '../stats.js';
import { Bridge } from './bridged-sockets.js';
import { AltSvcCache } from '../alt-svc.js';
import { pumpBody, watchEndedStream } from './body-pump.js';
import { EngineRequest, type RequestOwner } from './engine-request.js';
import { engineSettings, type EngineDispatcherOptions } from './pool-options.js';
import { PoolEvents } from './pool-events.js';
import { ServernameSwitch } from './servername-switch.js';
import { nativeArgs } from './tls-options.js';
import { microtask } from '../../core/microtask.js';

export type { EngineDispatcherOptions } from './pool-options.js';

/** Emits a dispatcher's 'drain': one function for all, so queueing it takes no closure. */
let emitDrain: (dispatcher: EngineDispatcher) => void;

export class EngineDispatcher extends DispatcherBase implements RequestOwner {
  readonly #origin: URL;
  /** The origin's host, read once: URL's getter makes a new string on every read. */
  readonly #host: string;
  /** The engine driver this dispatcher's requests run on. */
  readonly engine: EngineKind;
  /** The engine pool; null for a Pool made of Clients (pool.ts), which sends nothing here. */
  #native: NativePool | null;
  /** What the engine pool was made with (a servername switch makes the next one from it). */
  readonly #config: PoolConfig;
  /** https origins made by the engine: requests naming another `servername` (servername-switch.ts). */
  readonly #names: ServernameSwitch | null;
  #capacity: number;
  readonly #headersTimeout: number;
  readonly #bodyTimeout: number;
  /** ms a request() body may go unread before its connection is released (0: never). */
  readonly unconsumedBodyTimeout: number;
  readonly #strictContentLength: boolean;
  /**
   * Requests dispatched here and not yet settled. A count, not a set: the engine's registry
   * (native/engine.ts) already holds each one, and destroy() finds them there.
   */
  #open = 0;
  #needDrain = false;
  /** The engine pool was told to close (it finishes what it has). */
  #closing = false;
  /** The engine pool is gone. */
  #released = false;
  #closeWaiters: (() => void)[] = [];
  /** Set when connections are Node sockets from a connector (bridged-sockets.ts). */
  readonly #bridge: Bridge | null;
  readonly #events: PoolEvents;
  /** `allowH3`: the Alt-Svc entry HTTPS responses advertise (alt-svc.ts). */
  readonly altSvc: AltSvcCache | null = null;
  /** The last request head built ('' before the first), and its pieces (#head). */
  #lastHead = '';
  #lastMethod = '';
  #lastPath = '';
  #lastHost = '';
  #lastRest = '';

  static {
    emitDrain = (d) => d.emit('drain', d.#origin, [d]);
  }

  protected constructor(url: string | URL | UrlObject, opts: EngineDispatcherOptions, connections: number, enginePool = true) {
    super();
    this.#origin = parseOrigin(url);
    this.#host = this.#origin.host;
    this.engine = engineKind(opts.engine);
    const s = engineSettings(this.#origin, opts, connections);
    this.#headersTimeout = s.headersTimeout;
    this.#bodyTimeout = s.bodyTimeout;
    this.unconsumedBodyTimeout = s.unconsumedBodyTimeout;
    this.#strictContentLength = s.strictContentLength;
    this.#capacity = s.capacity;
    this.#bridge = s.bridged === null ? null : new Bridge(this.#origin, s.bridged, s.localAddress);
    // An h2 session carries up to maxConcurrentStreams requests where an h1 connection carries
    // `pipelining`: busy / drain follow the streams (HTTP/3's as h2's).
    const onH2 = (version: 'h2' | 'h3'): void => {
      const capacity = version === 'h3' ? s.h3Capacity : s.h2Capacity;
      if (capacity > this.#capacity) this.#capacity = capacity;
    };
    this.#events = new PoolEvents(this.#origin, this, this.#bridge, onH2);
    this.#config = s.pool;
    const https = this.#origin.protocol === 'https:';
    this.#names = https ? new ServernameSwitch(s.pool.tls?.servername || this.#origin.hostname.replace(/^\[(.*)\]$/, '$1')) : null;
    this.#native = enginePool ? nativeArgs(() => createPool(s.pool, this.#events, this.engine)) : null;
    // HTTP/3 found through Alt-Svc (prior knowledge needs none); the entry lives in the engine pool.
    if (s.pool.allowH3 === true && s.pool.h3PriorKnowledge !== true) {
      this.altSvc = new AltSvcCache((host, port, maxAgeMs) => this.#native?.altSvc(host, port, maxAgeMs));
    }
  }

  protected override get composeOrigin(): string {
    return this.#origin.origin;
  }

  /** Connections and requests right now: Pool's PoolStats, Client's ClientStats. */
  get stats(): PoolStats | ClientStats {
    return this.engineStats();
  }

  /** Its queued requests wait for a slot of its Agent's maxGlobalConnections (global-cap.ts). */
  get waitsForCap(): boolean {
    return !this.destroyed && this.#native?.waitsForCap() === true;
  }

  /** Connections and requests right now, as the engine counts them (undici's PoolStats fields). */
  protected engineStats(): PoolStats {
    if (this.destroyed || this.#native === null) return emptyStats();
    const { connected, free, queued } = this.#native.stats();
    // The engine knows what is queued; everything else this dispatcher still owns is in flight.
    const size = this.#open;
    const pending = Math.min(queued, size);
    return { connected, free, pending, queued: pending, running: size - pending, size };
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    const driven = toControllerHandler(handler);
    try {
      // undici's order: this dispatcher's state and the request's options, then the handler's hooks.
      const refused = this.refusal(opts);
      if (refused !== null) throw refused;
      checkRequestOptions(opts);
      checkRequestLine(opts);
      assertRequestHandler(driven, opts.method, opts.upgrade);
    } catch (err) {
      // As undici: a handler that can hear the error hears it; otherwise the call throws.
      if (typeof driven.onResponseError !== 'function') throw err;
      driven.onResponseError(detachedController, err as Error);
      // True, as undici: a request that failed at once took no capacity and no 'drain' follows,
      // so a pool must not set this dispatcher aside as busy.
      return true;
    }
    const req = new EngineRequest(this, driven);
    this.#open++;
    try {
      // A body factory (ts/handler/replayable-body.ts) makes a fresh body for each attempt.
      const body = typeof opts.body === 'function' ? resolveBodyFactory(opts.body) : opts.body;
      const parts = requestBodyParts(body);
      // A stream read out whole is watched from here: a failure to pack it still lets it go.
      if (parts.ended !== null) watchEndedStream(req, parts.ended);
      const packed = packRequest(opts, parts, this.#host, this.#strictContentLength);
      const name = this.#names?.nameFor(opts.servername);
      if (name !== undefined && this.#names!.mustWait(name)) {
        this.#names!.hold(req, name, () => this.#send(req, opts, packed));
        this.#switchNames();
      } else {
        this.#send(req, opts, packed);
      }
    } catch (err) {
      req.fail(err as Error);
      return true; // failed at once: see above
    }
    if (this.#open >= this.#capacity) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  #send(req: EngineRequest, opts: DispatchOptions, p: PackedRequest): void {
    if (req.done) return;
    let { flags } = p;
    if ((opts as { [kWebSocketSession]?: boolean })[kWebSocketSession] === true) {
      flags |= RequestFlag.WEBSOCKET;
      req.holdForWebSocket();
    }
    // Diagnostics channels and NODE_DEBUG (core/diagnostics.ts): null unless someone listens.
    const trace = observeRequest(this.#origin, opts, p.path, p.host, p.headers, p.body, p.stream !== null);
    let added = '';
    if (trace !== null) {
      req.trace = trace;
      flags |= RequestFlag.OBSERVE;
      added = trace.takeAddedHeaders();
    }
    const head = this.#head(p, added);
    const headersTimeout = opts.headersTimeout ?? this.#headersTimeout;
    const bodyTimeout = opts.bodyTimeout ?? this.#bodyTimeout;
    req.start();
    if (req.done) return;
    if (p.stream === null) {
      req.bodyComplete(p.body);
      this.#hand(req, head, p.body, flags, headersTimeout, bodyTimeout, -1);
      return;
    }
    void pumpBody(req, p.stream, p.contentLength, (first) => {
      if (first !== null) {
        return this.#hand(req, head, null, flags, headersTimeout, bodyTimeout, p.contentLength ?? -1);
      }
      // An empty source: a request without a body, framed as one.
      if (p.contentLength !== null && p.contentLength !== 0) {
        req.fail(new RequestContentLengthMismatchError());
        return false;
      }
      const empty = emptyBodyFor(p.method);
      req.bodyComplete(empty);
      return this.#hand(req, head, empty, flags & ~RequestFlag.STREAM_BODY, headersTimeout, bodyTimeout, -1);
    });
  }

  /**
   * The head string the engine reads: undici's order on the wire, host, connection (the engine's,
   * or an upgrade's), the rest. The last one is kept and handed out again while the pieces are the
   * same (the same requests over and over, as clients mostly send): comparing them costs less than
   * building the string, and the engine reads a kept one without V8 flattening it first.
   */
  #head(p: PackedRequest, added: string): string {
    const rest = p.extra + p.headers + added;
    if (this.#lastHead !== '' && this.#lastPath === p.path && this.#lastMethod === p.method && this.#lastHost === p.host && this.#lastRest === rest) {
      return this.#lastHead;
    }
    this.#lastMethod = p.method;
    this.#lastPath = p.path;
    this.#lastHost = p.host;
    this.#lastRest = rest;
    return (this.#lastHead = `${p.method}\0${p.path}\0host\0${p.host}\0${rest}`);
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
    let queued: boolean;
    try {
      queued = this.#native!.dispatch(req.id, head, buf, flags, headersTimeout, bodyTimeout, bodyLength);
    } catch (err) {
      // The engine's one check of the head (crates/engine/src/request/head.rs) refused it, with
      // undici's message: the same rules as core/headers.ts and core/request.ts, so not reached
      // from the API, which checks first for undici's order of errors.
      if ((err as { code?: unknown }).code !== 'InvalidArg') throw err;
      req.fail(new InvalidArgumentError((err as Error).message));
      return false;
    }
    if (!queued) {
      req.fail(new ClientDestroyedError());
      return false;
    }
    // A pause from onRequestStart came before the engine knew the request: pass it on now.
    if (req.paused) req.syncPause();
    scheduleFlush(this.#native!);
    return true;
  }

  requestDone(aborted: boolean): void {
    const size = --this.#open;
    // As undici: once the last waiting request aborted, a connection attempt nobody waits for is
    // given up (checked after this tick, when a caller may have sent the next request).
    if (aborted && size === 0) {
      queueMicrotask(() => {
        if (this.#open !== 0 || this.#released) return;
        // A connector's attempt is cancelled through the socket it returned; the engine's own, there.
        if (this.#bridge !== null) this.#bridge.cancelUnused();
        else this.#native?.cancelUnused();
      });
    }
    if (this.#names?.waiting === true) this.#switchNames();
    if (this.#needDrain && size < this.#capacity) {
      this.#needDrain = false;
      // One request at a time on a dispatcher of capacity 1 (the latency bench) drains after every
      // response: microtask() queues it where queueMicrotask would, without queueMicrotask's
      // AsyncResource and bound function (core/microtask.ts).
      microtask(emitDrain, this);
    }
    if (size === 0 && this.#closeWaiters.length > 0) this.#finishClose();
  }

  /** Sends the requests held for another servername once nothing else is in the engine. */
  #switchNames(): void {
    if (this.#released) return;
    this.#names!.settle(
      () => this.#open,
      (servername) => {
        const old = this.#native!;
        forgetPool(old);
        old.destroy();
        // A connector's sockets carry the connector's TLS: it is passed the name (bridged-sockets.ts).
        const tls = this.#config.tls == null ? undefined : { ...this.#config.tls, servername };
        this.#bridge?.switchName(servername);
        this.#native = nativeArgs(() => createPool({ ...this.#config, tls }, this.#events, this.engine));
        if (this.#closing) this.#native.close();
        this.#events.endAll(new InformationalError('servername changed'), () => {});
      },
    );
  }

  #release(): void {
    this.#released = true;
    if (this.#native !== null) {
      this.#native.destroy();
      forgetPool(this.#native);
    }
    this.#bridge?.destroy();
  }

  #finishClose(): void {
    this.markDestroyed();
    if (!this.#released) this.#release();
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    // undici closes by destroying: its connections end with ClientDestroyedError.
    this.#events.endAll(new ClientDestroyedError(), () => {
      for (const w of waiters) w();
    });
  }

  protected onClose(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
      if (!this.#closing) {
        this.#closing = true;
        this.#native?.close();
      }
      if (this.#open === 0) queueMicrotask(() => this.#finishClose());
    });
  }

  protected onDestroy(given: Error | null): Promise<void> {
    const err = given ?? new ClientDestroyedError();
    return new Promise<void>((resolve) => {
      if (this.#released) return queueMicrotask(resolve);
      this.#release();
      const pending: EngineRequest[] = [];
      for (const sink of openSinks()) if (sink instanceof EngineRequest && sink.ownedBy(this)) pending.push(sink);
      // What the engine reported before it was destroyed and is not delivered yet (the rest of this
      // batch: a body's end, say) goes nowhere, so a destroy from inside a response callback fails
      // that response, as undici's does.
      for (const r of pending) closeRequest(r.id);
      // Requests fail asynchronously (spec: destroy aborts pending and running requests asynchronously).
      queueMicrotask(() => {
        for (const r of pending) r.fail(err);
        const waiters = this.#closeWaiters;
        this.#closeWaiters = [];
        this.#events.endAll(err, () => {
          for (const w of waiters) w();
          resolve();
        });
      });
    });
  }
}
