// Socks5ProxyAgent (undici's): per-origin pools whose connections are SOCKS5 tunnels. The proxy
// resolves target names (remote DNS); for https origins the engine runs TLS over the tunnel, so
// the proxy only sees encrypted bytes.
import { ConnectTimeoutError, InvalidArgumentError } from '../core/errors.js';
import { buildConnector, type Connector, type ConnectorBuildOptions, type ConnectorCallback } from '../core/connector.js';
import { Agent, type AgentOptions } from '../dispatcher/agent.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { tunnelConnector } from '../dispatcher/engine/connector-plan.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import type { Socket } from 'node:net';
import { RoutingDispatcher } from './routing-dispatcher.js';
import { socks5Handshake, type Socks5Credentials } from './socks5-handshake.js';

export interface Socks5ProxyAgentOptions extends Omit<AgentOptions, 'connect'> {
  /** Accepted for undici compatibility; SOCKS5 has no headers. */
  headers?: Record<string, string>;
  username?: string;
  password?: string;
  /** Opens the socket to the proxy. Default: built from `proxyTls`. */
  connect?: Connector;
  /** Per stage (proxy connection, SOCKS5 negotiation, TLS to the target) in ms; 0: none. Default 5000. */
  connectTimeout?: number | null;
  /** TLS to the proxy itself. */
  proxyTls?: ConnectorBuildOptions;
  /** TLS to https targets, inside the tunnel. */
  requestTls?: ConnectorBuildOptions;
}

function timeoutOption(v: unknown, name: string, def: number): number {
  if (v == null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InvalidArgumentError(`invalid ${name}`);
  return v;
}

export class Socks5ProxyAgent extends RoutingDispatcher {
  readonly #agent: Dispatcher;

  constructor(proxyUrl: string | URL, options: Socks5ProxyAgentOptions = {}) {
    super();
    if (proxyUrl == null || proxyUrl === '') throw new InvalidArgumentError('Proxy URL is mandatory');
    let url: URL;
    try {
      url = new URL(String(proxyUrl));
    } catch {
      // Not echoed: the URL may hold credentials.
      throw new InvalidArgumentError('Proxy URL is not a valid URL');
    }
    if (url.protocol !== 'socks5:' && url.protocol !== 'socks:') {
      throw new InvalidArgumentError('Proxy URL must use socks5:// or socks:// protocol');
    }
    const { headers: _headers, username, password, connect, connectTimeout, proxyTls, requestTls, ...agentOpts } = options ?? {};
    const stage = timeoutOption(connectTimeout, 'connectTimeout', 5000);
    timeoutOption(proxyTls?.timeout, 'proxyTls.timeout', 0);
    timeoutOption(requestTls?.timeout, 'requestTls.timeout', 0);
    if (connect != null && typeof connect !== 'function') throw new InvalidArgumentError('connect must be a function');

    const user = username ?? decodeURIComponent(url.username);
    const pass = password ?? decodeURIComponent(url.password);
    const credentials: Socks5Credentials | null = user !== '' || pass !== '' ? { username: user, password: pass } : null;
    const proxyHost = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const proxyPort = url.port || '1080';
    const secure = proxyTls != null;
    const toProxy: Connector =
      connect ?? buildConnector({ timeout: stage, servername: secure ? proxyHost : undefined, ...proxyTls });

    const viaSocks = (target: { hostname: string; port: string; protocol: string }, cb: ConnectorCallback): void => {
      const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
      toProxy({ hostname: proxyHost, host: url.host, port: proxyPort, protocol: secure ? 'https:' : 'http:' }, (err, socket) => {
        if (err != null || socket == null) return cb(err ?? new InvalidArgumentError('connect must call back with an error or a socket'));
        negotiate(socket, target.hostname, port, credentials, stage, cb);
      });
    };
    // undici's `webSocket` option, reported by webSocketOptions like every dispatcher's.
    this.setWebSocketOptions(agentOpts.webSocket);
    this.#agent = new Agent({
      ...agentOpts,
      connect: tunnelConnector(viaSocks, { timeout: stage === 0 ? undefined : stage, ...requestTls }),
    });
  }

  protected *parts(): Iterable<Dispatcher> {
    yield this.#agent;
  }

  protected route(_origin: URL, opts: DispatchOptions, handler: DispatchHandler): boolean {
    return this.#agent.dispatch(opts, handler);
  }
}

/** The SOCKS5 stage, bounded by `timeout` ms (0: none). */
function negotiate(
  socket: Socket,
  host: string,
  port: number,
  credentials: Socks5Credentials | null,
  timeout: number,
  cb: ConnectorCallback,
): void {
  let timer: NodeJS.Timeout | undefined;
  if (timeout > 0) {
    timer = setTimeout(() => {
      socket.destroy(new ConnectTimeoutError(`Connect Timeout Error (SOCKS5 negotiation, timeout: ${timeout}ms)`));
    }, timeout);
    timer.unref();
  }
  socks5Handshake(socket, host, port, credentials).then(
    () => {
      clearTimeout(timer);
      cb(null, socket);
    },
    (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      cb(err, null);
    },
  );
}
