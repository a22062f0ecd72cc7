// interceptors.cookies({ jar }): sends the jar's cookies with each request and stores the
// Set-Cookie of each response, redirect hops included whichever side of the redirect interceptor
// it is composed on. Inside it, every hop passes through here; outside it, the redirect handler
// calls back (redirectHook) for each 3xx before it follows it. A request's own cookie header is
// kept, the jar's pairs appended on the same line, and never stored.
import { InvalidArgumentError } from '../core/errors.js';
import { spread } from '../core/spread.js';
import type { DispatchController, DispatchHandler, DispatchOptions, DispatcherComposeInterceptor, IncomingHeaders } from '../core/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { CookieJar, jarAccess } from '../cookie-jar/cookie-jar.js';
import { cookieUrl, type CookieUrl } from '../cookie-jar/cookie-url.js';
import { DecoratorHandler } from '../handler/decorator-handler.js';
import { headerValues, rewriteHeaders } from '../handler/header-list.js';
import { redirectHistory, redirectHook, type RedirectHook, type RedirectHop } from '../handler/redirect-handler.js';

export interface CookiesInterceptorOptions {
  /** Where cookies are kept and read from. */
  jar: CookieJar;
}

/** One request and its redirects: where it is now, and whether the chain has left its first site. */
interface Chain {
  jar: CookieJar;
  url: CookieUrl;
  firstSite: string;
  crossSite: boolean;
}

function storeSetCookies(chain: Chain, headers: IncomingHeaders | IncomingHttpHeaders): void {
  const raw = headers['set-cookie'];
  if (raw === undefined) return;
  for (const value of Array.isArray(raw) ? raw : [raw]) jarAccess.store(chain.jar, value, chain.url);
}

/** `headers` with one cookie line: the request's own cookie values, then the jar's (none: unchanged). */
function withCookies(opts: DispatchOptions, chain: Chain): DispatchOptions['headers'] {
  const fromJar = jarAccess.header(chain.jar, chain.url, { crossSite: chain.crossSite, method: opts.method });
  if (fromJar === '') return opts.headers;
  const own = headerValues(opts.headers, 'cookie');
  const line = own.length === 0 ? fromJar : `${own.join('; ')}; ${fromJar}`;
  return rewriteHeaders(opts.headers, (name) => name === 'cookie', [['cookie', line]]);
}

/** Stores the Set-Cookie of the final response (and of an upgrade's 101) under the chain's current URL. */
class CookieHandler extends DecoratorHandler {
  readonly #chain: Chain;

  constructor(handler: DispatchHandler, chain: Chain) {
    super(handler);
    this.#chain = chain;
  }

  #store(controller: DispatchController, headers: IncomingHeaders | IncomingHttpHeaders): boolean {
    try {
      storeSetCookies(this.#chain, headers);
      return true;
    } catch (err) {
      // A failing store (a SQLite file gone bad) fails the request rather than losing cookies quietly.
      controller.abort(err as Error);
      return false;
    }
  }

  override onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    if (this.#store(controller, headers)) super.onRequestUpgrade(controller, statusCode, headers, socket);
  }

  override onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    if (statusCode < 200 || this.#store(controller, headers)) super.onResponseStart(controller, statusCode, headers, statusMessage);
  }
}

/** A chain starting at `url`; for a hop of an outer redirect interceptor, one that knows the URLs before it. */
function startChain(jar: CookieJar, url: CookieUrl, history: readonly URL[] | undefined): Chain {
  if (history === undefined || history.length === 0) return { jar, url, firstSite: url.site, crossSite: false };
  const firstSite = cookieUrl(history[0]!).site;
  const crossSite = url.site !== firstSite || history.some((u) => cookieUrl(u).site !== firstSite);
  return { jar, url, firstSite, crossSite };
}

/** The redirect hook of an interceptor outside the redirect interceptor: the hops it never sees. */
function hopHook(chain: Chain, ownCookies: string[], previous: RedirectHook | undefined): RedirectHook {
  return (hop: RedirectHop, proposed: DispatchOptions): DispatchOptions => {
    const next = previous === undefined ? proposed : previous(hop, proposed);
    storeSetCookies(chain, hop.headers);
    chain.url = cookieUrl(hop.to);
    if (chain.url.site !== chain.firstSite) chain.crossSite = true;
    // The redirect handler kept the cookie line (same origin) or dropped it (cross-origin, or
    // stripHeadersOnRedirect): the request's own values go on only where it kept them.
    const kept = headerValues(next.headers, 'cookie').length > 0;
    const headers = rewriteHeaders(next.headers, (name) => name === 'cookie', kept && ownCookies.length > 0 ? [['cookie', ownCookies.join('; ')]] : []);
    return spread(next, { headers: withCookies(spread(next, { headers }), chain) });
  };
}

export function cookies(options: CookiesInterceptorOptions): DispatcherComposeInterceptor {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('cookies: options must be an object');
  const { jar } = options;
  if (!(jar instanceof CookieJar)) throw new InvalidArgumentError('cookies: jar must be a CookieJar');
  return (dispatch, interceptorOrigin?: string | URL | null) => {
    // A Client or Pool passes its own origin: its requests go there whatever opts.origin says.
    const ownOrigin = interceptorOrigin == null ? null : String(interceptorOrigin);
    return function cookiesInterceptor(opts: DispatchOptions, handler: DispatchHandler): boolean {
      const base = ownOrigin ?? (opts.origin == null ? null : String(opts.origin));
      // The origin and the path side by side, never resolved against each other: a path such as
      // '//elsewhere/x' or 'http://elsewhere/' must not pick up elsewhere's cookies.
      if (base === null || typeof opts.path !== 'string' || !opts.path.startsWith('/')) return dispatch(opts, handler);
      let url: CookieUrl;
      let origin: string;
      try {
        origin = new URL(base).origin;
        url = cookieUrl(origin + opts.path);
      } catch {
        // Not an http(s) URL, or a malformed path: the dispatcher reports it with its own error.
        return dispatch(opts, handler);
      }
      const history = (opts as { [redirectHistory]?: readonly URL[] })[redirectHistory];
      const chain = startChain(jar, url, history);
      const previous = (opts as { [redirectHook]?: RedirectHook })[redirectHook];
      const hook = hopHook(chain, headerValues(opts.headers, 'cookie'), previous);
      const sent = spread(opts, { headers: withCookies(opts, chain), [redirectHook]: hook });
      if (opts.origin == null) (sent as { origin?: string }).origin = origin;
      return dispatch(sent, new CookieHandler(handler, chain));
    };
  };
}
