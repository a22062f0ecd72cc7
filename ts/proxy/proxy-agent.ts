// ProxyAgent (undici's): every request goes through one proxy. https origins (and http ones with
// `proxyTunnel: true`) get a CONNECT tunnel per connection, with the origin's TLS run by the engine
// over the tunnel; plain http origins are forwarded in absolute form (`GET http://host/path`). An
// `https:` proxy URL puts TLS to the proxy underneath both. `socks5:` / `socks:` URLs are served by
// a Socks5ProxyAgent.
import { InvalidArgumentError } from '../core/errors.js';
import { buildConnector, type Connector, type ConnectorBuildOptions } from '../core/connector.js';
import { Agent, type AgentOptions } from '../dispatcher/agent.js';
import { Client } from '../dispatcher/client.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { Pool } from '../dispatcher/pool.js';
import { tunnelConnector } from '../dispatcher/engine/connector-plan.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import type { DispatchController, DispatchHandler, DispatchOptions, IncomingHeaders } from '../core/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { openTunnel, secureProxyError, withStatus } from './connect-tunnel.js';
import { proxiedHeaders } from './proxy-headers.js';
import { RoutingDispatcher } from './routing-dispatcher.js';
import { Socks5ProxyAgent } from './socks5-proxy-agent.js';
import { spread } from '../core/spread.js';

export interface ProxyAgentOptions extends Omit<AgentOptions, 'connect'> {
  /** The proxy: `http:`, `https:`, `socks5:` or `socks:`; credentials in it become proxy auth. */
  uri: string | URL;
  /** A complete `proxy-authorization` value, e.g. `Bearer …`. */
  token?: string;
  /** @deprecated base64 `user:password` for Basic proxy auth; use `token`. */
  auth?: string;
  /** Headers for the proxy: on each CONNECT, or on each forwarded request. */
  headers?: Record<string, string>;
  /** TLS to the origin (inside the tunnel). */
  requestTls?: ConnectorBuildOptions;
  /** TLS to an `https:` proxy. */
  proxyTls?: ConnectorBuildOptions;
  /** Makes the dispatcher that talks to the proxy (CONNECT). Default: a Pool. */
  clientFactory?: (origin: URL, opts: object) => Dispatcher;
  /**
   * Makes the dispatcher of each origin (and the one that forwards to the proxy). Declared as a
   * method, as undici declares it, so a factory written for `(origin: URL, opts)` is accepted:
   * the origin comes as the request gave it, a string or a URL.
   */
  factory?(origin: string | URL, opts: object): Dispatcher;
  /** Tunnel plain http origins too instead of forwarding them in absolute form. */
  proxyTunnel?: boolean;
  /** SOCKS5 credentials (they win over those in `uri`). */
  username?: string;
  password?: string;
}

const PROTOCOLS = new Set(['http:', 'https:', 'socks5:', 'socks:']);

function defaultFactory(origin: string | URL, opts: object): Dispatcher {
  return (opts as AgentOptions).connections === 1 ? new Client(origin, opts) : new Pool(origin, opts);
}

/** The proxy URL; never echoed in errors, as it may hold credentials. */
function proxyUrl(uri: unknown): URL {
  if (uri instanceof URL) return new URL(uri.href);
  if (typeof uri !== 'string' || uri === '') throw new InvalidArgumentError('Proxy uri is mandatory');
  try {
    return new URL(uri);
  } catch {
    throw new InvalidArgumentError('Proxy uri is not a valid URL');
  }
}

/** The `proxy-authorization` value: `token`, else `auth`, else the URL's user and password. */
function authorization(opts: ProxyAgentOptions, url: URL): string | undefined {
  if (opts.auth != null && opts.token != null) {
    throw new InvalidArgumentError('opts.auth cannot be used in combination with opts.token');
  }
  if (opts.token != null) return String(opts.token);
  if (opts.auth != null) return `Basic ${opts.auth}`;
  if (url.username === '') return undefined;
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

/** The host:port a CONNECT names for a connector's target. */
function authorityOf(hostname: string, port: string, protocol: string): string {
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return `${host}:${port || (protocol === 'https:' ? 443 : 80)}`;
}

/**
 * A request forwarded to the proxy in absolute form: a 407 answer fails it, as undici does, with
 * the status on the error; an `https:` proxy's failed TLS handshake is SecureProxyConnectionError.
 */
class ForwardGuard implements DispatchHandler {
  readonly #inner: DispatchHandler;
  readonly #secureProxy: boolean;

  constructor(inner: DispatchHandler, secureProxy: boolean) {
    this.#inner = inner;
    this.#secureProxy = secureProxy;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    if (statusCode === 407) {
      controller.abort(withStatus(new InvalidArgumentError('Proxy Authentication Required (407)'), 407));
      return;
    }
    this.#inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#inner.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    this.#inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: DispatchController, error: Error): void {
    this.#inner.onResponseError?.(controller, this.#secureProxy ? secureProxyError(error) : error);
  }
  onBodySent(chunk: Buffer): void {
    this.#inner.onBodySent?.(chunk);
  }
}

export declare namespace ProxyAgent {
  export type Options = ProxyAgentOptions;
}

export class ProxyAgent extends RoutingDispatcher {
  /** The proxy's origin, without credentials. */
  readonly #proxy: URL;
  readonly #headers: Record<string, string>;
  readonly #tunnelHttp: boolean;
  /** Talks to the proxy: CONNECT requests go through it. Null for SOCKS5. */
  readonly #client: Dispatcher | null;
  /** Per-origin pools over tunnels (or the Socks5ProxyAgent). */
  readonly #agent: Dispatcher;
  /** Where absolute-form requests go, made on first use. */
  #forward: Dispatcher | null = null;
  readonly #makeForward: () => Dispatcher;

  constructor(options: ProxyAgentOptions | string | URL) {
    super();
    const opts: ProxyAgentOptions =
      typeof options === 'string' || options instanceof URL ? { uri: options } : (options ?? ({} as ProxyAgentOptions));
    if (typeof opts !== 'object') throw new InvalidArgumentError('Proxy uri is mandatory');
    this.setWebSocketOptions(opts.webSocket);
    this.setEventSourceOptions(opts.eventSource);
    const url = proxyUrl(opts.uri);
    if (!PROTOCOLS.has(url.protocol)) {
      throw new InvalidArgumentError('Proxy uri must use the http:, https:, socks5: or socks: protocol');
    }
    const clientFactory = opts.clientFactory ?? ((origin: URL, o: object) => new Pool(origin, o));
    if (typeof clientFactory !== 'function') throw new InvalidArgumentError('Proxy opts.clientFactory must be a function.');
    if (opts.headers != null && typeof opts.headers !== 'object') throw new InvalidArgumentError('Proxy opts.headers must be an object');
    const {
      uri: _uri,
      token: _token,
      auth: _auth,
      headers,
      requestTls,
      proxyTls,
      clientFactory: _cf,
      proxyTunnel,
      username,
      password,
      ...agentOpts
    } = opts;
    const factory: (origin: string | URL, opts: object) => Dispatcher =
      (agentOpts.factory as ((origin: string | URL, opts: object) => Dispatcher) | undefined) ?? defaultFactory;
    this.#tunnelHttp = proxyTunnel === true;
    // Without credentials (`origin` is "null" for socks: URLs, so built by hand).
    this.#proxy = new URL(`${url.protocol}//${url.host}`);
    this.#headers = { ...headers };
    const connectTimeout = agentOpts.connectTimeout;

    if (url.protocol === 'socks5:' || url.protocol === 'socks:') {
      this.#client = null;
      this.#agent = new Socks5ProxyAgent(url, {
        ...agentOpts,
        username: username ?? undefined,
        password: password ?? undefined,
        proxyTls,
        requestTls,
      });
      this.#makeForward = () => this.#agent;
      return;
    }

    const auth = authorization(opts, url);
    if (auth !== undefined) this.#headers['proxy-authorization'] = auth;
    const toProxy: Connector = buildConnector({ timeout: connectTimeout, ...proxyTls });
    this.#client = clientFactory(this.#proxy, { connect: toProxy });

    const tunnelHeaders = { ...this.#headers };
    if (agentOpts.connections !== 0) tunnelHeaders['proxy-connection'] = 'keep-alive';
    const client = this.#client;
    const proxy = this.#proxy;
    const servername = proxyTls?.servername ?? url.hostname;
    const tunnel = tunnelConnector(
      (target, cb) => openTunnel(client, proxy, authorityOf(target.hostname, target.port, target.protocol), tunnelHeaders, servername, cb),
      { timeout: connectTimeout, ...requestTls },
    );
    this.#agent = new Agent({ ...agentOpts, factory, connect: tunnel });
    this.#makeForward = () =>
      factory(this.#proxy, { ...agentOpts, factory: undefined, connect: buildConnector({ timeout: connectTimeout, ...proxyTls, allowH2: false }) });
  }

  protected *parts(): Iterable<Dispatcher> {
    yield this.#agent;
    if (this.#client !== null) yield this.#client;
    if (this.#forward !== null) yield this.#forward;
  }

  protected route(origin: URL, opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (this.#client === null || origin.protocol !== 'http:' || this.#tunnelHttp) {
      return this.#agent.dispatch(spread(opts, { headers: proxiedHeaders(opts.headers, origin.host) }), handler);
    }
    // Absolute form to the proxy, with the proxy's headers (and credentials) on each request.
    const headers = proxiedHeaders(opts.headers, origin.host, this.#headers);
    this.#forward ??= this.#makeForward();
    const path = typeof opts.path === 'string' && opts.path.startsWith('/') ? opts.path : `/${opts.path ?? ''}`;
    return this.#forward.dispatch(
      spread(opts, { origin: this.#proxy.origin, path: `${origin.origin}${path}`, headers }),
      new ForwardGuard(toControllerHandler(handler), this.#proxy.protocol === 'https:'),
    );
  }
}
