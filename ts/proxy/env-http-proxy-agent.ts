// EnvHttpProxyAgent (undici's): picks the proxy per request from http_proxy / https_proxy /
// no_proxy (lower case wins over upper case) or the options that override them. http_proxy alone
// serves both schemes; https_proxy alone serves https only. NO_PROXY is read again when the
// environment changes, unless `noProxy` was given.
import { Agent } from '../dispatcher/agent.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { NoProxy } from './no-proxy.js';
import { ProxyAgent, type ProxyAgentOptions } from './proxy-agent.js';
import { RoutingDispatcher } from './routing-dispatcher.js';

export interface EnvHttpProxyAgentOptions extends Omit<ProxyAgentOptions, 'uri'> {
  /** Overrides http_proxy / HTTP_PROXY. */
  httpProxy?: string;
  /** Overrides https_proxy / HTTPS_PROXY. */
  httpsProxy?: string;
  /** Overrides no_proxy / NO_PROXY. */
  noProxy?: string;
}

function env(name: string): string | undefined {
  return process.env[name] ?? process.env[name.toUpperCase()];
}

export class EnvHttpProxyAgent extends RoutingDispatcher {
  readonly #direct: Agent;
  readonly #http: Dispatcher;
  readonly #https: Dispatcher;
  readonly #fixedNoProxy: string | undefined;
  #noProxyText = '';
  #noProxy = new NoProxy('');

  constructor(opts: EnvHttpProxyAgentOptions = {}) {
    super();
    const { httpProxy, httpsProxy, noProxy, ...agentOpts } = opts ?? {};
    this.setWebSocketOptions(agentOpts.webSocket);
    this.setEventSourceOptions(agentOpts.eventSource);
    this.#direct = new Agent(agentOpts);
    const http = httpProxy ?? env('http_proxy');
    this.#http = http ? new ProxyAgent({ ...agentOpts, uri: http }) : this.#direct;
    const https = httpsProxy ?? env('https_proxy');
    this.#https = https ? new ProxyAgent({ ...agentOpts, uri: https }) : this.#http;
    this.#fixedNoProxy = noProxy;
  }

  protected *parts(): Iterable<Dispatcher> {
    yield this.#direct;
    yield this.#http;
    yield this.#https;
  }

  #rules(): NoProxy {
    const text = this.#fixedNoProxy ?? env('no_proxy') ?? '';
    if (text !== this.#noProxyText) {
      this.#noProxyText = text;
      this.#noProxy = new NoProxy(text);
    }
    return this.#noProxy;
  }

  protected route(origin: URL, opts: DispatchOptions, handler: DispatchHandler): boolean {
    const target = this.#rules().bypasses(origin) ? this.#direct : origin.protocol === 'https:' ? this.#https : this.#http;
    return target.dispatch(opts, handler);
  }
}

// undici's companion type, reached through the class (`EnvHttpProxyAgent.Options`).
export declare namespace EnvHttpProxyAgent {
  export type Options = EnvHttpProxyAgentOptions;
}
