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
import { cookieOrigin, cookieUrl, type CookieOrigin, type CookieUrl } from '../cookie-jar/cookie-url.js';
import { DecoratorHandler } from '../handler/decorator-handler.js';
import { headerValues, rewriteHeaders } from '../handler/header-list.js';
import { redirectHistory, redirectHook, type RedirectHook, type RedirectHop } from '../handler/redirect-handler.js';

export interface CookiesInterceptorOptions {
  /** Where cookies are kept and read from. */
  jar: CookieJar;
}

// Origins whose facts are kept per interceptor; past this the map starts over.
const MAX_ORIGINS = 1000;

/** The path of a request path (no query, no fragment), as the server sees it. */
function pathOf(path: string): string {
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
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

/** The jar's cookie header value for the chain's current URL ('' when none). */
function jarLine(chain: Chain, method: string): string {
  return jarAccess.header(chain.jar, chain.url, { crossSite: chain.crossSite, method });
}

/** `headers` with one cookie line: the request's own values `own`, then the jar's. */
function withCookieLine(headers: DispatchOptions['headers'], own: readonly string[], fromJar: string): string[] {
  const line = fromJar === '' ? own.join('; ') : own.length === 0 ? fromJar : `${own.join('; ')}; ${fromJar}`;
  return rewriteHeaders(headers, (name) => name === 'cookie', line === '' ? [] : [['cookie', line]]);
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
    // The line on `next` holds the jar's cookies for the previous URL: it is rebuilt whole.
    const kept = headerValues(next.headers, 'cookie').length > 0;
    return spread(next, { headers: withCookieLine(next.headers, kept ? ownCookies : [], jarLine(chain, next.method)) });
  };
}

export function cookies(options: CookiesInterceptorOptions): DispatcherComposeInterceptor {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('cookies: options must be an object');
  const { jar } = options;
  if (!(jar instanceof CookieJar)) throw new InvalidArgumentError('cookies: jar must be a CookieJar');
  return (dispatch, interceptorOrigin?: string | URL | null) => {
    // A Client or Pool passes its own origin: its requests go there whatever opts.origin says.
    const ownOrigin = interceptorOrigin == null ? null : String(interceptorOrigin);
    // What the cookie rules need of an origin (host, site, secure), read once per origin.
    const origins = new Map<string, CookieOrigin & { origin: string }>();
    const factsOf = (base: string): (CookieOrigin & { origin: string }) | null => {
      let facts = origins.get(base);
      if (facts === undefined) {
        try {
          facts = { ...cookieOrigin(base), origin: new URL(base).origin };
        } catch {
          return null; // not an http(s) origin: the dispatcher reports it with its own error
        }
        if (origins.size >= MAX_ORIGINS) origins.clear();
        origins.set(base, facts);
      }
      return facts;
    };
    return function cookiesInterceptor(opts: DispatchOptions, handler: DispatchHandler): boolean {
      const base = ownOrigin ?? (opts.origin == null ? null : String(opts.origin));
      // The origin and the path side by side, never resolved against each other: a path such as
      // '//elsewhere/x' or 'http://elsewhere/' must not pick up elsewhere's cookies.
      if (base === null || typeof opts.path !== 'string' || !opts.path.startsWith('/')) return dispatch(opts, handler);
      const facts = factsOf(base);
      if (facts === null) return dispatch(opts, handler);
      // A literal, not a spread: Node 20 gives a spread result a hidden class of its own each time.
      const url: CookieUrl = { host: facts.host, isIp: facts.isIp, secure: facts.secure, site: facts.site, registrable: facts.registrable, path: pathOf(opts.path) };
      const history = (opts as { [redirectHistory]?: readonly URL[] })[redirectHistory];
      const chain = startChain(jar, url, history);
      const previous = (opts as { [redirectHook]?: RedirectHook })[redirectHook];
      const own = headerValues(opts.headers, 'cookie');
      const fromJar = jarLine(chain, opts.method);
      // Nothing from the jar: the headers go as they are.
      const headers = fromJar === '' ? opts.headers : withCookieLine(opts.headers, own, fromJar);
      const sent = spread(opts, { headers, [redirectHook]: hopHook(chain, own, previous) });
      if (opts.origin == null) (sent as { origin?: string }).origin = facts.origin;
      return dispatch(sent, new CookieHandler(handler, chain));
    };
  };
}
