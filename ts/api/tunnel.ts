// connect() (HTTP CONNECT → ConnectData) and upgrade() (101 → UpgradeData): one request whose
// answer is a socket instead of a body. Any other answer fails with SocketError, as in undici.
import { AsyncResource } from 'node:async_hooks';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError, SocketError } from '../core/errors.js';
import type { RequestDispatcher } from './request.js';

/** A node-style callback: the error, or null and the result. */
export type Callback<T> = (err: Error | null, data: T) => void;
import type { AbortSignalLike, DispatchController, DispatchHandler, IncomingHeaders, LibHeaders } from '../core/types.js';
import { ApiHandler, checkSignal } from './api-handler.js';

export interface ConnectOptions<TOpaque = null> {
  origin?: string | URL;
  path: string;
  headers?: LibHeaders;
  signal?: AbortSignalLike | null;
  opaque?: TOpaque;
  [key: string]: unknown;
}
export interface ConnectData<TOpaque = null> {
  statusCode: number;
  headers: IncomingHttpHeaders;
  socket: Duplex;
  opaque: TOpaque;
}
export interface UpgradeOptions {
  origin?: string | URL;
  path: string;
  method?: string;
  headers?: LibHeaders;
  /** Comma-separated protocols in descending preference. */
  protocol?: string;
  signal?: AbortSignalLike | null;
  opaque?: unknown;
  [key: string]: unknown;
}
export interface UpgradeData<TOpaque = null> {
  headers: IncomingHttpHeaders;
  socket: Duplex;
  opaque: TOpaque;
}

type Settle = (err: Error | null, socket: Duplex | null, status: number, headers: IncomingHeaders) => void;

class TunnelHandler extends ApiHandler implements DispatchHandler {
  #settle: Settle | null;
  readonly #what: string;

  constructor(what: 'connect' | 'upgrade', signal: AbortSignalLike | null | undefined, settle: Settle) {
    checkSignal(signal);
    super({ signal });
    this.#what = what;
    this.#settle = settle;
  }

  protected onAbortSignal(reason: Error): void {
    this.abortRequest(reason);
  }

  #finish(err: Error | null, socket: Duplex | null, status = 0, headers: IncomingHeaders = {}): void {
    const settle = this.#settle;
    if (settle === null) return;
    this.#settle = null;
    this.done = true;
    this.removeSignal();
    settle(err, socket, status, headers);
  }

  onRequestUpgrade(_c: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    // A switch to no named protocol is no upgrade: the connection cannot be trusted either way.
    if (this.#what === 'upgrade' && (statusCode !== 101 || headers.upgrade == null)) {
      socket.destroy();
      this.#finish(new SocketError('bad upgrade'), null);
      return;
    }
    this.#finish(null, socket, statusCode, headers as IncomingHeaders);
  }

  onResponseStart(controller: DispatchController, statusCode: number): void {
    if (statusCode < 200) return; // 1xx before the answer
    controller.abort(new SocketError(`bad ${this.#what}`));
  }

  onResponseData(): void {}
  onResponseEnd(): void {}

  onResponseError(_c: DispatchController, err: Error): void {
    this.#finish(err, null);
  }
}

/** What an error callback gets besides the error (undici's `{ opaque }`). */
type Failed = { opaque: unknown };

function run<T>(
  opts: unknown,
  executor: (settle: (err: Error | null, data: T | Failed) => void) => void,
  callback?: Callback<T>,
): Promise<T> | void {
  if (callback !== undefined) {
    // undici's order: the options are checked before the callback.
    if (typeof callback !== 'function') {
      checkOpts(opts);
      throw new InvalidArgumentError('invalid callback');
    }
    // As undici's AsyncResource: the callback runs in the caller's async context, not the engine's.
    const resource = new AsyncResource('LIB_TUNNEL');
    executor((err, data) => resource.runInAsyncScope(callback, null, err, data as T));
    return;
  }
  return new Promise<T>((resolve, reject) => executor((err, data) => (err ? reject(err) : resolve(data as T))));
}

function checkOpts(opts: unknown): asserts opts is Record<string, unknown> {
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
}

export function connect<TOpaque = null>(
  this: RequestDispatcher,
  opts: ConnectOptions<TOpaque>,
  callback?: Callback<ConnectData<TOpaque>>,
): Promise<ConnectData<TOpaque>> | void {
  const dispatcher = this;
  return run<ConnectData<TOpaque>>(opts, (settle) => {
    try {
      checkOpts(opts);
      const opaque = (opts.opaque ?? null) as TOpaque;
      const handler = new TunnelHandler('connect', opts.signal, (err, socket, statusCode, headers) =>
        err ? settle(err, { opaque }) : settle(null, { statusCode, headers, socket: socket!, opaque }),
      );
      dispatcher.dispatch({ ...opts, method: 'CONNECT', body: null, upgrade: null, signal: undefined }, handler);
    } catch (err) {
      queueMicrotask(() => settle(err as Error, { opaque: (opts as ConnectOptions<TOpaque> | null)?.opaque }));
    }
  }, callback);
}

export function upgrade<TOpaque = null>(
  this: RequestDispatcher,
  opts: UpgradeOptions,
  callback?: Callback<UpgradeData<TOpaque>>,
): Promise<UpgradeData<TOpaque>> | void {
  const dispatcher = this;
  return run<UpgradeData<TOpaque>>(opts, (settle) => {
    try {
      checkOpts(opts);
      const protocol = opts.protocol ?? 'Websocket';
      if (typeof protocol !== 'string') throw new InvalidArgumentError('invalid protocol');
      const opaque = (opts.opaque ?? null) as TOpaque;
      const handler = new TunnelHandler('upgrade', opts.signal, (err, socket, _status, headers) =>
        err ? settle(err, { opaque }) : settle(null, { headers, socket: socket!, opaque }),
      );
      dispatcher.dispatch(
        { ...opts, method: opts.method ?? 'GET', upgrade: protocol, body: null, signal: undefined },
        handler,
      );
    } catch (err) {
      queueMicrotask(() => settle(err as Error, { opaque: (opts as UpgradeOptions | null)?.opaque }));
    }
  }, callback);
}
