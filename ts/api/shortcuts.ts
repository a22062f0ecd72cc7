// Top-level request / stream / pipeline / connect / upgrade: take a URL (a string, a URL, or a
// URL-like object that may carry every option itself), split it into origin and path, and run
// the operation on `options.dispatcher` or the global dispatcher.
import type { Duplex } from 'node:stream';
import type { ConnectData, ConnectOptions, UpgradeData, UpgradeOptions } from './tunnel.js';
import { InvalidArgumentError } from '../core/errors.js';
import { parseOrigin, parseURL, type UrlObject } from '../core/url.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import type {
  PipelineHandler,
  PipelineOptions,
  RequestOptions,
  ResponseData,
  StreamData,
  StreamFactory,
} from '../core/types.js';
import { spread } from '../core/spread.js';

export type { UrlObject };

/** The operation's options, with origin / path / method derived from the URL when absent. */
export type ShortcutOptions<O> = Partial<O> & { dispatcher?: Dispatcher };

/** A URL, or (as in undici) an object that is both the URL and the operation's options. */
export type ShortcutUrl<O> = string | URL | UrlObject | (UrlObject & ShortcutOptions<O>);

type Callback<T> = (err: Error | null, data: T) => void;
type AnyOptions = Record<string, unknown>;

/**
 * The dispatcher to use and the options it gets. With `opts.path`, `url` must be a bare origin;
 * without options, an object `url` is the options too (`request({ origin, path, headers })`).
 */
function resolve(url: unknown, options: unknown): [Dispatcher, AnyOptions] {
  if (!url || (typeof url !== 'string' && typeof url !== 'object')) throw new InvalidArgumentError('invalid url');
  if (options != null && typeof options !== 'object') throw new InvalidArgumentError('invalid opts');
  let opts = options as AnyOptions | null | undefined;
  let target: URL;
  if (opts != null && opts.path != null) {
    if (typeof opts.path !== 'string') throw new InvalidArgumentError('invalid opts.path');
    const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
    target = new URL(parseOrigin(url).origin + path);
  } else {
    if (!opts) opts = typeof url === 'object' ? (url as AnyOptions) : {};
    target = parseURL(url);
  }
  const { agent, dispatcher, ...rest } = opts;
  if (agent) throw new InvalidArgumentError('unsupported opts.agent. Did you mean opts.client?');
  const chosen = (dispatcher ?? getGlobalDispatcher()) as Dispatcher | null;
  if (chosen === null || typeof chosen !== 'object' || typeof chosen.dispatch !== 'function') {
    throw new InvalidArgumentError('invalid opts.dispatcher');
  }
  return [
    chosen,
    spread(rest, {
      origin: target.origin,
      path: target.search ? `${target.pathname}${target.search}` : target.pathname,
      method: opts.method || (opts.body ? 'PUT' : 'GET'),
    }),
  ];
}

export function request<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options?: ShortcutOptions<RequestOptions<TOpaque>> | null,
): Promise<ResponseData<TOpaque>>;
export function request<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  callback: Callback<ResponseData<TOpaque>>,
): void;
export function request<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  callback: Callback<ResponseData<TOpaque>>,
): void;
export function request<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options?: ShortcutOptions<RequestOptions<TOpaque>> | Callback<ResponseData<TOpaque>> | null,
  callback?: Callback<ResponseData<TOpaque>>,
): Promise<ResponseData<TOpaque>> | void {
  if (typeof options === 'function') [options, callback] = [null, options];
  // A bad URL or options throw synchronously, as undici's shortcuts do.
  const [dispatcher, opts] = resolve(url, options);
  const o = opts as unknown as RequestOptions<TOpaque>;
  return callback === undefined ? dispatcher.request(o) : dispatcher.request(o, callback);
}

export function stream<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  factory: StreamFactory<TOpaque>,
): Promise<StreamData<TOpaque>>;
export function stream<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  factory: StreamFactory<TOpaque>,
  callback: Callback<StreamData<TOpaque>>,
): void;
export function stream<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  factory: StreamFactory<TOpaque>,
): Promise<StreamData<TOpaque>>;
export function stream<TOpaque = null>(
  url: ShortcutUrl<RequestOptions<TOpaque>>,
  options: ShortcutOptions<RequestOptions<TOpaque>> | StreamFactory<TOpaque> | null | undefined,
  factory?: StreamFactory<TOpaque> | Callback<StreamData<TOpaque>>,
  callback?: Callback<StreamData<TOpaque>>,
): Promise<StreamData<TOpaque>> | void {
  if (typeof options === 'function') {
    callback = factory as Callback<StreamData<TOpaque>> | undefined;
    [options, factory] = [null, options];
  }
  const [dispatcher, opts] = resolve(url, options);
  const o = opts as unknown as RequestOptions<TOpaque>;
  const f = factory as StreamFactory<TOpaque>;
  return callback === undefined ? dispatcher.stream(o, f) : dispatcher.stream(o, f, callback);
}

export function pipeline<TOpaque = null>(
  url: ShortcutUrl<PipelineOptions<TOpaque>>,
  options: ShortcutOptions<PipelineOptions<TOpaque>> | null | undefined,
  handler: PipelineHandler<TOpaque>,
): Duplex;
export function pipeline<TOpaque = null>(url: ShortcutUrl<PipelineOptions<TOpaque>>, handler: PipelineHandler<TOpaque>): Duplex;
export function pipeline<TOpaque = null>(
  url: ShortcutUrl<PipelineOptions<TOpaque>>,
  options: ShortcutOptions<PipelineOptions<TOpaque>> | PipelineHandler<TOpaque> | null | undefined,
  handler?: PipelineHandler<TOpaque>,
): Duplex {
  if (typeof options === 'function') [options, handler] = [null, options];
  const [dispatcher, opts] = resolve(url, options);
  return dispatcher.pipeline(opts as unknown as PipelineOptions<TOpaque>, handler as PipelineHandler<TOpaque>);
}

/** `connect(url, options)`: CONNECT through the dispatcher serving `url`'s origin (a proxy). */
export function connect<TOpaque = null>(
  url: ShortcutUrl<ConnectOptions<TOpaque>>,
  options?: ShortcutOptions<ConnectOptions<TOpaque>> | null,
): Promise<ConnectData<TOpaque>>;
export function connect<TOpaque = null>(
  url: ShortcutUrl<ConnectOptions<TOpaque>>,
  options: ShortcutOptions<ConnectOptions<TOpaque>> | null | undefined,
  callback: Callback<ConnectData<TOpaque>>,
): void;
export function connect<TOpaque = null>(url: ShortcutUrl<ConnectOptions<TOpaque>>, callback: Callback<ConnectData<TOpaque>>): void;
export function connect<TOpaque = null>(
  url: ShortcutUrl<ConnectOptions<TOpaque>>,
  options?: ShortcutOptions<ConnectOptions<TOpaque>> | Callback<ConnectData<TOpaque>> | null,
  callback?: Callback<ConnectData<TOpaque>>,
): Promise<ConnectData<TOpaque>> | void {
  if (typeof options === 'function') [options, callback] = [null, options];
  const [dispatcher, opts] = resolve(url, options);
  const o = opts as unknown as ConnectOptions<TOpaque>;
  return callback === undefined ? dispatcher.connect(o) : dispatcher.connect(o, callback);
}

/** `upgrade(url, options)`: asks the server at `url` to switch protocols. */
export function upgrade<TOpaque = null>(
  url: ShortcutUrl<UpgradeOptions>,
  options?: ShortcutOptions<UpgradeOptions> | null,
): Promise<UpgradeData<TOpaque>>;
export function upgrade<TOpaque = null>(
  url: ShortcutUrl<UpgradeOptions>,
  options: ShortcutOptions<UpgradeOptions> | null | undefined,
  callback: Callback<UpgradeData<TOpaque>>,
): void;
export function upgrade<TOpaque = null>(url: ShortcutUrl<UpgradeOptions>, callback: Callback<UpgradeData<TOpaque>>): void;
export function upgrade<TOpaque = null>(
  url: ShortcutUrl<UpgradeOptions>,
  options?: ShortcutOptions<UpgradeOptions> | Callback<UpgradeData<TOpaque>> | null,
  callback?: Callback<UpgradeData<TOpaque>>,
): Promise<UpgradeData<TOpaque>> | void {
  if (typeof options === 'function') [options, callback] = [null, options];
  const [dispatcher, opts] = resolve(url, options);
  const o = opts as unknown as UpgradeOptions;
  return callback === undefined ? dispatcher.upgrade<TOpaque>(o) : dispatcher.upgrade<TOpaque>(o, callback);
}
