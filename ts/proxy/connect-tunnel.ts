// Opens a CONNECT tunnel through a dispatcher connected to an HTTP proxy and hands back the socket
// (the engine's connection, now a byte stream) to a connector's callback. A refused tunnel (407,
// 403, 502...) fails with the status on the error; errors never carry the request's headers, so
// proxy credentials cannot leak through them. An open tunnel is announced on the
// `proxy:connected` diagnostics channel, as undici does.
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { ProxyConnectionError, RequestAbortedError, SecureProxyConnectionError } from '../core/errors.js';
import type { ConnectorCallback } from '../core/connector.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DispatchController, DispatchHandler } from '../core/types.js';
import { hasSubscribers, publish } from '../core/diagnostics.js';

/** What a CONNECT asks the proxy for; `proxy:connected` subscribers get it as `connectParams`. */
interface TunnelParams {
  /** The proxy's origin. */
  origin: string;
  /** The proxy's port ('' for the protocol's default). */
  port: string;
  /** The tunnel's target, `host:port`. */
  path: string;
  signal: undefined;
  /** The CONNECT request's headers. */
  headers: Record<string, string>;
  /** The TLS server name used for an `https:` proxy. */
  servername: string;
}

/** An error about the proxy's answer, with the status it gave. */
export function withStatus<E extends Error>(err: E, statusCode: number): E & { statusCode: number } {
  return Object.assign(err, { statusCode });
}

/** Errors of a TLS handshake with the proxy (Node / OpenSSL codes), as opposed to socket errors. */
function isTlsFailure(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (err as { syscall?: unknown }).syscall === 'connect' && !/^E[A-Z]+$/.test(code);
}

/**
 * An error on the way to an `https:` proxy that is the TLS handshake's (bad certificate, wrong
 * name...) becomes SecureProxyConnectionError with it as `cause`; others pass unchanged.
 */
export function secureProxyError(err: Error): Error {
  return isTlsFailure(err) ? new SecureProxyConnectionError(err) : err;
}

class TunnelHandler implements DispatchHandler {
  #callback: ConnectorCallback | null;
  readonly #secureProxy: boolean;
  readonly #params: TunnelParams;

  constructor(callback: ConnectorCallback, secureProxy: boolean, params: TunnelParams) {
    this.#callback = callback;
    this.#secureProxy = secureProxy;
    this.#params = params;
  }

  #done(err: Error | null, socket?: Duplex): void {
    const cb = this.#callback;
    this.#callback = null;
    if (cb === null) {
      socket?.destroy();
      return;
    }
    if (err !== null) cb(err, null);
    else cb(null, socket as Socket);
  }

  onRequestStart(): void {}

  onRequestUpgrade(_c: DispatchController, statusCode: number, _headers: unknown, socket: Duplex): void {
    if (statusCode === 200) {
      if (hasSubscribers('proxy:connected')) publish('proxy:connected', { socket, connectParams: this.#params });
      return this.#done(null, socket);
    }
    socket.destroy();
    this.#done(refused(statusCode));
  }

  onResponseStart(_c: DispatchController, statusCode: number): void {
    // A refusal is an ordinary response: report it now, let its body drain so the connection
    // to the proxy stays usable.
    if (statusCode >= 200) this.#done(refused(statusCode));
  }

  onResponseData(): void {}
  onResponseEnd(): void {}

  onResponseError(_c: DispatchController, err: Error): void {
    if ((err as { code?: unknown }).code === 'UND_ERR_SOCKET') err = new ProxyConnectionError(err);
    else if (this.#secureProxy) err = secureProxyError(err);
    this.#done(err);
  }
}

function refused(statusCode: number): RequestAbortedError & { statusCode: number } {
  return withStatus(new RequestAbortedError(`Proxy response (${statusCode}) !== 200 when HTTP Tunneling`), statusCode);
}

/**
 * CONNECT `authority` (host:port) through `proxy`, whose origin is `proxyOrigin`. The request asks
 * for `connection: close` as undici's does: once it succeeds the connection is the tunnel's.
 */
export function openTunnel(
  proxy: Dispatcher,
  proxyOrigin: URL,
  authority: string,
  headers: Record<string, string>,
  servername: string,
  callback: ConnectorCallback,
): void {
  const sent = { ...headers, host: authority };
  const params: TunnelParams = {
    origin: proxyOrigin.origin,
    port: proxyOrigin.port,
    path: authority,
    signal: undefined,
    headers: sent,
    servername,
  };
  const handler = new TunnelHandler(callback, proxyOrigin.protocol === 'https:', params);
  proxy.dispatch({ origin: proxyOrigin.origin, method: 'CONNECT', path: authority, headers: sent, body: null, reset: true }, handler);
}
