// RedirectHandler (undici's name): follows 3xx responses that carry a Location, up to
// `maxRedirections` hops. The caller sees only the final response; the hops' bodies are read and
// dropped (so their connections stay reusable). The URLs visited are the request context's
// `history`, as in undici. A request body that cannot be sent again (a stream or iterable a hop
// took) ends the chain: that 3xx is the caller's response.
import { assertHandlerObject } from '../core/request.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError, MaxRedirectsError } from '../core/errors.js';
import type { DispatchController, DispatchFn, DispatchHandler, DispatchOptions, IncomingHeaders } from '../core/types.js';
import { rewriteHeaders } from './header-list.js';
import { toControllerHandler } from './legacy-handler.js';
import { discardBody, isSpent } from './replayable-body.js';
import { spread } from '../core/spread.js';

export interface RedirectOptions {
  maxRedirections?: number;
  throwOnMaxRedirect?: boolean;
  stripHeadersOnRedirect?: string[];
  stripHeadersOnCrossOriginRedirect?: string[];
}

/**
 * A redirect the handler followed: the 3xx the caller never sees. A cache outside the redirect
 * interceptor reads these (followedRedirects) to judge the chain before it files the final
 * response under the URL first asked for.
 */
export interface FollowedRedirect {
  statusCode: number;
  headers: IncomingHeaders;
  /** When the 3xx arrived (ms since the epoch). */
  receivedAt: number;
  /** The absolute URL it led to; null when the request's origin was unknown (a relative Location). */
  to: string | null;
}

// Carried, non-enumerable, on the `history` array of the request context: that array is what
// reaches the handlers outside (undici's shape), and it survives interceptors copying the context.
const followed = Symbol('ferro.followedRedirects');

/** The redirects followed so far for the request whose context this is (undefined: no redirect handler). */
export function followedRedirects(context: unknown): readonly FollowedRedirect[] | undefined {
  const history = (context as { history?: unknown } | null | undefined)?.history;
  return Array.isArray(history) ? (history as { [followed]?: FollowedRedirect[] })[followed] : undefined;
}

/**
 * A request option (symbol-keyed, so never a header or a public name): header names removed before
 * any redirect is followed. The cache puts its validators here, since they describe the URL it
 * revalidates and no other.
 */
export const dropOnRedirect = Symbol('ferro.dropOnRedirect');

/** A redirect about to be followed, as a `redirectHook` sees it. */
export interface RedirectHop {
  statusCode: number;
  headers: IncomingHeaders;
  /** The URL that answered with the 3xx; null when the request's origin was unknown. */
  from: URL | null;
  /** Where the next request goes. */
  to: URL;
  /** The URLs requested so far, the first request's first. */
  history: readonly URL[];
}

/**
 * A request option (symbol-keyed): called for each redirect followed, with the 3xx and the next
 * hop's options, it returns the options to send instead. An interceptor outside the redirect
 * interceptor never sees the hops; the cookies interceptor stores a 3xx's Set-Cookie and builds
 * the next hop's cookie header here. It stays on every hop's options.
 */
export const redirectHook = Symbol('ferro.redirectHook');
export type RedirectHook = (hop: RedirectHop, next: DispatchOptions) => DispatchOptions;

/**
 * Set (symbol-keyed) on the options of every hop after the first: the URLs requested before it,
 * so that an interceptor inside the redirect interceptor can tell a hop from a new request.
 */
export const redirectHistory = Symbol('ferro.redirectHistory');

const REDIRECT_STATUS = new Set([300, 301, 302, 303, 307, 308]);
// Credentials meant for one origin only (Fetch's CORS-non-wildcard request-header names et al.).
const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'proxy-authorization', 'cookie']);

function headerNameList(value: unknown, name: string): Set<string> | null {
  if (value == null) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new InvalidArgumentError(`${name} must be an array of header names`);
  }
  return new Set(value.map((v: string) => v.toLowerCase()));
}

/** Throws InvalidArgumentError for a bad option; used by the interceptor and per request. */
export function validateRedirectOptions(opts: RedirectOptions): void {
  checkMaxRedirections(opts.maxRedirections);
  checkRedirectFlags(opts);
}

function checkMaxRedirections(maxRedirections: unknown): void {
  if (maxRedirections != null && (!Number.isInteger(maxRedirections) || (maxRedirections as number) < 0)) {
    throw new InvalidArgumentError('maxRedirections must be a positive number');
  }
}

/** The options other than maxRedirections (a handler is given its own count beside them). */
function checkRedirectFlags(opts: RedirectOptions): void {
  if (opts.throwOnMaxRedirect != null && typeof opts.throwOnMaxRedirect !== 'boolean') {
    throw new InvalidArgumentError('throwOnMaxRedirect must be a boolean');
  }
  headerNameList(opts.stripHeadersOnRedirect, 'stripHeadersOnRedirect');
  headerNameList(opts.stripHeadersOnCrossOriginRedirect, 'stripHeadersOnCrossOriginRedirect');
}

function originOf(origin: unknown): string | null {
  if (origin == null || origin === '') return null;
  try {
    return new URL(String(origin)).origin;
  } catch {
    return null;
  }
}

export class RedirectHandler implements DispatchHandler {
  /** Every URL requested so far (when the origin is known), the final one included. */
  readonly history: URL[] = [];
  readonly maxRedirections: number;
  readonly #dispatch: DispatchFn;
  readonly #handler: DispatchHandler;
  readonly #throwOnMax: boolean;
  readonly #strip: Set<string> | null;
  readonly #stripCrossOrigin: Set<string> | null;
  #opts: DispatchOptions;
  /** The next hop's options while a 3xx body is being read and dropped. */
  #next: DispatchOptions | null = null;
  #redirects = 0;
  #dispatched = false;

  /** A dispatch function that follows up to `maxRedirections` redirects (undici's helper). */
  static buildDispatch(dispatcher: { dispatch: DispatchFn }, maxRedirections: number): DispatchFn {
    checkMaxRedirections(maxRedirections);
    const dispatch: DispatchFn = dispatcher.dispatch.bind(dispatcher);
    return (opts, handler) => dispatch(opts, new RedirectHandler(dispatch, maxRedirections, opts, handler));
  }

  constructor(dispatch: DispatchFn, maxRedirections: number, opts: DispatchOptions & RedirectOptions, handler: DispatchHandler) {
    if (typeof dispatch !== 'function') throw new InvalidArgumentError('dispatch must be a function');
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object');
    assertHandlerObject(handler);
    checkMaxRedirections(maxRedirections);
    checkRedirectFlags(opts);
    const { maxRedirections: _max, throwOnMaxRedirect, stripHeadersOnRedirect, stripHeadersOnCrossOriginRedirect, ...rest } = opts;
    this.maxRedirections = maxRedirections ?? 0;
    this.#throwOnMax = throwOnMaxRedirect === true;
    this.#strip = headerNameList(stripHeadersOnRedirect, 'stripHeadersOnRedirect');
    this.#stripCrossOrigin = headerNameList(stripHeadersOnCrossOriginRedirect, 'stripHeadersOnCrossOriginRedirect');
    this.#opts = rest;
    this.#dispatch = dispatch;
    this.#handler = toControllerHandler(handler);
  }

  /** The options of the request in flight (what the first hop is sent with, at first). */
  get opts(): DispatchOptions {
    return this.#opts;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#dispatched = true;
    this.#handler.onRequestStart?.(controller, spread(context, { history: this.history }));
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    if (statusCode < 200) {
      this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
      return;
    }
    const opts = this.#opts;
    const origin = originOf(opts.origin);
    let current: URL | null = null;
    try {
      current = new URL(opts.path, origin ?? 'http://localhost');
    } catch {
      /* an unusual path: only an absolute Location can be followed */
    }
    if (origin !== null && current !== null) this.history.push(current);
    const next = REDIRECT_STATUS.has(statusCode) ? this.#nextHop(controller, statusCode, headers, origin, current) : null;
    if (next === undefined) return;
    if (next === null) {
      this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
      return;
    }
    this.#redirects++;
    this.#next = next;
  }

  /** The options of the hop a 3xx leads to; null: deliver it as is; undefined: it failed the request. */
  #nextHop(
    controller: DispatchController,
    statusCode: number,
    headers: IncomingHeaders,
    origin: string | null,
    current: URL | null,
  ): DispatchOptions | null | undefined {
    const raw = headers.location;
    const location = Array.isArray(raw) ? raw[0] : raw;
    if (!location) return null;
    let target: URL;
    try {
      target = new URL(location, current ?? undefined);
    } catch {
      return null;
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return null;
    const opts = this.#opts;
    let { method, body } = opts;
    // 303 asks for a GET of the new location; browsers (and undici) do the same for a POST
    // answered with 301 / 302. The body and the headers describing it go.
    const toGet = (statusCode === 303 && method !== 'HEAD') || ((statusCode === 301 || statusCode === 302) && method === 'POST');
    // A body that cannot be sent again ends the chain here: the caller gets this 3xx (as undici).
    if (!toGet && isSpent(body, this.#dispatched)) return null;
    if (this.#redirects >= this.maxRedirections) {
      if (!this.#throwOnMax) return null;
      controller.abort(new MaxRedirectsError()); // undici's bare message
      return undefined;
    }
    const dropContent = toGet || statusCode === 303;
    if (toGet) {
      discardBody(body);
      method = 'GET';
      body = null;
    }
    // A relative Location with no known origin stays where it is; anything else is compared.
    const crossOrigin = origin === null ? /^[a-z][a-z0-9+.-]*:/i.test(location) : target.origin !== origin;
    const strip = this.#strip;
    const stripCross = this.#stripCrossOrigin;
    const bound = (opts as { [dropOnRedirect]?: readonly string[] })[dropOnRedirect];
    const drop = (name: string): boolean =>
      name === 'host' ||
      (dropContent && name.startsWith('content-')) ||
      (strip !== null && strip.has(name)) ||
      (bound !== undefined && bound.includes(name)) ||
      (crossOrigin && (CROSS_ORIGIN_DROPPED.has(name) || (stripCross !== null && stripCross.has(name))));
    this.#followed().push({ statusCode, headers, receivedAt: Date.now(), to: origin === null && !crossOrigin ? null : target.href });
    const next: DispatchOptions = {
      ...opts,
      method,
      body,
      headers: rewriteHeaders(opts.headers, drop),
      path: target.pathname + target.search,
      origin: origin === null && !crossOrigin ? opts.origin : target.origin,
      query: null,
      [redirectHistory]: this.history,
    } as DispatchOptions;
    const hook = (opts as { [redirectHook]?: RedirectHook })[redirectHook];
    if (hook === undefined) return next;
    try {
      return hook({ statusCode, headers, from: origin === null ? null : current, to: target, history: this.history }, next);
    } catch (err) {
      controller.abort(err as Error);
      return undefined;
    }
  }

  /** The record of followed redirects on `history`, made at the first (most requests never need it). */
  #followed(): FollowedRedirect[] {
    const history = this.history as { [followed]?: FollowedRedirect[] };
    let hops = history[followed];
    if (hops === undefined) Object.defineProperty(history, followed, { value: (hops = []) });
    return hops;
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    // A redirect's own body is not the caller's.
    if (this.#next === null) this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    const next = this.#next;
    if (next === null) {
      this.#handler.onResponseEnd?.(controller, trailers);
      return;
    }
    this.#next = null;
    this.#opts = next;
    try {
      this.#dispatch(next, this);
    } catch (err) {
      this.#handler.onResponseError?.(controller, err as Error);
    }
  }

  onResponseError(controller: DispatchController, error: Error): void {
    this.#next = null;
    this.#handler.onResponseError?.(controller, error);
  }
}
