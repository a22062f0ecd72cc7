// Top-level request / stream / pipeline: take a URL, split it into origin and path, and run the
// operation on `options.dispatcher` or the global dispatcher.
import type { Duplex } from 'node:stream';
import type { ConnectData, ConnectOptions, UpgradeData, UpgradeOptions } from './tunnel.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import type {
  PipelineHandler,
  PipelineOptions,
  RequestOptions,
  ResponseData,
  StreamData,
  StreamFactory,
} from '../dispatcher/types.js';

/** The object form of a URL (node:url's legacy shape and friends). */
export interface UrlObject {
  origin?: string;
  protocol?: string;
  hostname?: string;
  host?: string;
  port?: string | number;
  pathname?: string;
  search?: string;
  path?: string;
  href?: string;
}

/** The operation's options, with origin / path / method derived from the URL when absent. */
export type ShortcutOptions<O> = Partial<O> & { dispatcher?: Dispatcher };

type Callback<T> = (err: Error | null, data: T) => void;

function parseUrl(url: string | URL | UrlObject): URL {
  let parsed: URL;
  try {
    if (url instanceof URL) {
      parsed = url;
    } else if (typeof url === 'string') {
      parsed = new URL(url);
    } else if (typeof url.href === 'string') {
      parsed = new URL(url.href);
    } else {
      const port = url.port != null && url.port !== '' ? `:${url.port}` : '';
      const origin = url.origin ?? `${url.protocol ?? 'http:'}//${url.hostname ?? url.host ?? ''}${port}`;
      const path = url.path ?? `${url.pathname ?? '/'}${url.search ?? ''}`;
      parsed = new URL(path.startsWith('/') ? `${origin}${path}` : `${origin}/${path}`);
    }
  } catch {
    throw new InvalidArgumentError('invalid url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
  }
  return parsed;
}

/** The dispatcher to use and the options it gets: origin and path from the URL (opts.path wins). */
function resolve<O extends RequestOptions<unknown>>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<O> | null | undefined,
): [Dispatcher, O] {
  if (url == null || (typeof url !== 'string' && typeof url !== 'object')) throw new InvalidArgumentError('invalid url');
  if (options != null && typeof options !== 'object') throw new InvalidArgumentError('invalid opts');
  const { dispatcher, ...opts } = (options ?? {}) as ShortcutOptions<O>;
  if ('agent' in opts && opts.agent != null) throw new InvalidArgumentError('unsupported opts.agent; use opts.dispatcher');
  const parsed = parseUrl(url);
  let path: string;
  if (opts.path != null) {
    if (typeof opts.path !== 'string') throw new InvalidArgumentError('invalid opts.path');
    path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
  } else {
    path = `${parsed.pathname}${parsed.search}`;
  }
  const target = dispatcher ?? getGlobalDispatcher();
  if (target === null || typeof target !== 'object' || typeof target.dispatch !== 'function') {
    throw new InvalidArgumentError('invalid opts.dispatcher');
  }
  const method = opts.method || (opts.body != null ? 'PUT' : 'GET');
  return [target, { ...opts, origin: parsed.origin, path, method } as O];
}

export function request<TOpaque = null>(
  url: string | URL | UrlObject,
  options?: ShortcutOptions<RequestOptions<TOpaque>> | null,
): Promise<ResponseData<TOpaque>>;
export function request<TOpaque = null>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  callback: Callback<ResponseData<TOpaque>>,
): void;
export function request<TOpaque = null>(
  url: string | URL | UrlObject,
  options?: ShortcutOptions<RequestOptions<TOpaque>> | null,
  callback?: Callback<ResponseData<TOpaque>>,
): Promise<ResponseData<TOpaque>> | void {
  // A bad URL or options throw synchronously, as undici's shortcuts do.
  const [dispatcher, opts] = resolve<RequestOptions<TOpaque>>(url, options);
  return callback === undefined ? dispatcher.request(opts) : dispatcher.request(opts, callback);
}

export function stream<TOpaque = null>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  factory: StreamFactory<TOpaque>,
): Promise<StreamData<TOpaque>>;
export function stream<TOpaque = null>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  factory: StreamFactory<TOpaque>,
  callback: Callback<StreamData<TOpaque>>,
): void;
export function stream<TOpaque = null>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<RequestOptions<TOpaque>> | null | undefined,
  factory: StreamFactory<TOpaque>,
  callback?: Callback<StreamData<TOpaque>>,
): Promise<StreamData<TOpaque>> | void {
  // A bad URL or options throw synchronously, as undici's shortcuts do.
  const [dispatcher, opts] = resolve<RequestOptions<TOpaque>>(url, options);
  return callback === undefined ? dispatcher.stream(opts, factory) : dispatcher.stream(opts, factory, callback);
}

export function pipeline<TOpaque = null>(
  url: string | URL | UrlObject,
  options: ShortcutOptions<PipelineOptions<TOpaque>> | null | undefined,
  handler: PipelineHandler<TOpaque>,
): Duplex {
  const [dispatcher, opts] = resolve(url, options);
  return dispatcher.pipeline(opts, handler);
}

/** `connect(url, options)`: CONNECT through the dispatcher serving `url`'s origin (a proxy). */
export function connect<TOpaque = null>(
  url: string | URL | UrlObject,
  options?: ShortcutOptions<ConnectOptions<TOpaque>> | null,
  callback?: Callback<ConnectData<TOpaque>>,
): Promise<ConnectData<TOpaque>> | void {
  const [dispatcher, opts] = resolve<RequestOptions<TOpaque>>(url, options as ShortcutOptions<RequestOptions<TOpaque>>);
  const connectOpts = opts as unknown as ConnectOptions<TOpaque>;
  return callback === undefined ? dispatcher.connect(connectOpts) : dispatcher.connect(connectOpts, callback);
}

/** `upgrade(url, options)`: asks the server at `url` to switch protocols. */
export function upgrade<TOpaque = null>(
  url: string | URL | UrlObject,
  options?: ShortcutOptions<UpgradeOptions> | null,
  callback?: Callback<UpgradeData<TOpaque>>,
): Promise<UpgradeData<TOpaque>> | void {
  const [dispatcher, opts] = resolve<RequestOptions<TOpaque>>(url, options as ShortcutOptions<RequestOptions<TOpaque>>);
  const upgradeOpts = opts as unknown as UpgradeOptions;
  return callback === undefined
    ? dispatcher.upgrade<TOpaque>(upgradeOpts)
    : dispatcher.upgrade<TOpaque>(upgradeOpts, callback);
}
