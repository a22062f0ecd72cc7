// fetch(): the WHATWG fetch API (with Node's own Request, Response and Headers) sent through a
// ferro dispatcher — `init.dispatcher`, else the global one. Redirects and content decoding are
// done here, above the dispatcher, as the Fetch standard's HTTP fetch does.
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';
import type { DispatchOptions } from '../core/types.js';
import { kDebugScope, type ScopedOptions } from '../core/diagnostics.js';
import { createDecoders } from './content-decoding.js';
import { abortReason, FetchHandler, fetchFailed, headerValue } from './fetch-handler.js';
import { markFetchTiming } from './resource-timing.js';
import { performance } from 'node:perf_hooks';
import { newFetchResponse } from './fetch-response.js';
import { getGlobalOrigin } from './global-origin.js';
import { verifyIntegrity } from './integrity.js';
import { DEFAULT_REFERRER_POLICY, determineReferrer, parseReferrerPolicy } from './referrer.js';
import { hopHeaders } from './request-headers.js';

/** RequestInit plus the dispatcher to send through. */
export interface FetchInit extends RequestInit {
  dispatcher?: Dispatcher;
}

const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
// Dropped when a redirect turns the request into a body-less GET (Fetch: request-body-header names).
const REQUEST_BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];
// Credentials that must not follow a redirect to another origin.
const CROSS_ORIGIN_STRIPPED = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * The request body as sent: bytes can be re-sent after a 307 / 308 redirect; a stream cannot
 * (the Fetch standard's body with a null source).
 */
type OutgoingBody = { bytes: Uint8Array } | { stream: ReadableStream<Uint8Array> } | null;

function isStreamBody(body: unknown): boolean {
  return (
    body instanceof ReadableStream ||
    (typeof body === 'object' && body !== null && typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
  );
}

async function outgoingBody(request: Request, input: unknown, init: FetchInit | undefined): Promise<OutgoingBody> {
  if (request.body === null) return null;
  // A Request passed in gives no sign of where its body came from, so it counts as a stream.
  const streamed = init?.body != null ? isStreamBody(init.body) : input instanceof Request;
  if (streamed) return { stream: request.body };
  return { bytes: new Uint8Array(await request.arrayBuffer()) };
}

/** A request body stream as the async iterable dispatchers take; an abort cancels the read. */
async function* readStream(stream: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  const onAbort = (): void => void reader.cancel(abortReason(signal)).catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) return;
      yield value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}

function isAborted(signal: AbortSignal | null): signal is AbortSignal {
  return signal !== null && signal.aborted;
}

/**
 * Where a Location points. Header values are byte strings (latin1); a server that puts raw UTF-8
 * in one means UTF-8, so a value with anything but visible ASCII is read as UTF-8 first, as
 * undici's fetch and browsers do.
 */
function locationUrl(location: string, base: URL): URL {
  return new URL(/[^\x20-\x7e]/.test(location) ? Buffer.from(location, 'latin1').toString('utf8') : location, base);
}

/**
 * The path and query a URL asks for. An empty query still counts: `/p?` is sent as written (as
 * undici's fetch sends it), though `search` is '' for it as for no query at all.
 */
function requestTarget(url: URL): string {
  if (url.search !== '') return url.pathname + url.search;
  const hash = url.href.indexOf('#');
  const beforeHash = hash === -1 ? url.href : url.href.slice(0, hash);
  return beforeHash.endsWith('?') ? `${url.pathname}?` : url.pathname;
}

function isHttp(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** What fetch sends: a Request's fields, or the same read straight off a simple call. */
interface Outgoing {
  url: URL;
  method: string;
  /** The caller's headers; null: none set, so the defaults alone are sent. */
  headers: Headers | null;
  signal: AbortSignal | null;
  /**
   * The Request objects `signal` came through. Node's Request forwards its caller's abort through a
   * WeakRef to its own controller, so they must stay reachable while the fetch runs, or an abort
   * after a garbage collection is lost.
   */
  signalOwners: readonly object[];
  redirect: RequestRedirect;
  mode: RequestMode;
  cache: RequestCache;
  /** Where the Referer comes from (null: none), and the policy that cuts it down per hop. */
  referrer: URL | null;
  referrerPolicy: string;
  body: OutgoingBody;
  /** Subresource Integrity metadata; '' for none. */
  integrity: string;
}

const SIMPLE_INIT_KEYS = new Set(['dispatcher', 'method', 'headers', 'signal']);

/**
 * The referrer of a request that names none ("about:client"): outside a browser the environment's
 * URL is the global origin, if one is set.
 */
function clientReferrer(): URL | null {
  const origin = getGlobalOrigin();
  return origin === undefined || origin.origin === 'null' ? null : origin;
}

/** A Request's referrer as the URL it names; null for none ('' is "no-referrer"). */
function referrerSource(referrer: string): URL | null {
  if (referrer === '') return null;
  return referrer === 'about:client' ? clientReferrer() : new URL(referrer);
}

/**
 * A GET or HEAD of an absolute http(s) URL with at most headers and a signal: everything a Request
 * would check is checked here, without building one. null: anything else, for Request to handle
 * (and to throw the errors it throws).
 */
function simpleRequest(input: unknown, init: FetchInit | undefined): Outgoing | null {
  if (typeof input !== 'string' && !(input instanceof URL)) return null;
  let method = 'GET';
  let headers: Headers | null = null;
  let signal: AbortSignal | null = null;
  if (init != null) {
    for (const key of Object.keys(init)) if (!SIMPLE_INIT_KEYS.has(key)) return null;
    if (init.method != null) {
      if (typeof init.method !== 'string') return null;
      method = init.method.toUpperCase();
      if (method !== 'GET' && method !== 'HEAD') return null;
    }
    if (init.signal != null) {
      if (!(init.signal instanceof AbortSignal)) return null;
      signal = init.signal;
    }
    if (init.headers != null) headers = new Headers(init.headers);
  }
  let url: URL;
  try {
    url = new URL(typeof input === 'string' ? input : input.href);
  } catch {
    return null;
  }
  if (!isHttp(url) || url.username !== '' || url.password !== '') return null;
  return {
    url,
    method,
    headers,
    signal,
    signalOwners: [],
    redirect: 'follow',
    mode: 'cors',
    cache: 'default',
    referrer: clientReferrer(),
    referrerPolicy: DEFAULT_REFERRER_POLICY,
    body: null,
    integrity: '',
  };
}

async function fromRequest(input: string | URL | Request, init: FetchInit | undefined): Promise<Outgoing> {
  const request = new Request(input, init);
  const { signal } = request;
  if (signal.aborted) throw abortReason(signal);
  const body = await outgoingBody(request, input, init);
  return {
    url: new URL(request.url),
    method: request.method,
    // A copy: redirects delete from it.
    headers: new Headers(request.headers),
    signal,
    signalOwners: input instanceof Request ? [request, input] : [request],
    redirect: request.redirect,
    mode: request.mode,
    cache: request.cache,
    referrer: referrerSource(request.referrer),
    referrerPolicy: request.referrerPolicy || DEFAULT_REFERRER_POLICY,
    body,
    integrity: request.integrity,
  };
}

export async function fetch(input: string | URL | Request, init?: FetchInit): Promise<Response> {
  const startTime = performance.now();
  const out = simpleRequest(input, init) ?? (await fromRequest(input, init));
  const { signal, redirect, integrity, mode, cache } = out;
  if (isAborted(signal)) throw abortReason(signal);
  const dispatcher = init?.dispatcher ?? getGlobalDispatcher();
  let { url, method, headers, body, referrer, referrerPolicy } = out;
  // Outside a browser a request's origin is the global origin's, if one is set.
  const requestOrigin = getGlobalOrigin()?.origin ?? null;
  let crossOrigin = false;

  for (let redirects = 0; ; redirects++) {
    if (!isHttp(url)) throw fetchFailed(new Error(`unsupported URL scheme: ${url.protocol}`));
    if (isAborted(signal)) throw abortReason(signal);
    // Each hop cuts the referrer down further, as main fetch does with the request's own.
    if (referrer !== null) referrer = determineReferrer(referrer, referrerPolicy, url);
    crossOrigin ||= mode === 'cors' && url.origin !== out.url.origin;
    const handler = new FetchHandler(signal, out.signalOwners);
    const options: DispatchOptions & ScopedOptions = {
      // NODE_DEBUG=fetch prints this request's lines (core/debug.ts).
      [kDebugScope]: 'fetch',
      origin: url.origin,
      path: requestTarget(url),
      method,
      headers: hopHeaders(headers, {
        url,
        method,
        mode,
        cache,
        hasBody: body !== null,
        referrer,
        referrerPolicy,
        requestOrigin,
        crossOrigin,
      }),
      body: body === null ? null : 'bytes' in body ? body.bytes : readStream(body.stream, signal!),
    };
    try {
      dispatcher.dispatch(options, handler);
    } catch (err) {
      handler.abort(err);
      throw fetchFailed(err);
    }
    const head = await handler.head;

    const location = REDIRECT_STATUSES.has(head.status) ? headerValue(head.headers, 'location') : null;
    if (location !== null && redirect !== 'manual') {
      handler.discard();
      if (redirect === 'error') throw fetchFailed(new Error('unexpected redirect'));
      if (redirects >= MAX_REDIRECTS) throw fetchFailed(new Error('redirect count exceeded'));
      let next: URL;
      try {
        next = locationUrl(location, url);
      } catch (err) {
        throw fetchFailed(err);
      }
      if (!isHttp(next)) throw fetchFailed(new Error('URL scheme must be a HTTP(S) scheme'));
      // Main fetch: a same-origin request may not be led to another origin than its first URL's.
      if (mode === 'same-origin' && next.origin !== out.url.origin) throw fetchFailed(new Error('request mode cannot be "same-origin"'));
      referrerPolicy = parseReferrerPolicy(headerValue(head.headers, 'referrer-policy')) || referrerPolicy;
      // A streamed body has been consumed; only a 303 (which drops it) can go on.
      if (head.status !== 303 && body !== null && 'stream' in body) {
        throw fetchFailed(new Error('cannot follow a redirect with a streamed request body'));
      }
      if (((head.status === 301 || head.status === 302) && method === 'POST') || (head.status === 303 && method !== 'GET' && method !== 'HEAD')) {
        method = 'GET';
        body = null;
        if (headers !== null) for (const name of REQUEST_BODY_HEADERS) headers.delete(name);
      }
      if (next.origin !== url.origin && headers !== null) for (const name of CROSS_ORIGIN_STRIPPED) headers.delete(name);
      url = next;
      continue;
    }

    // The Fetch standard's main fetch: a HEAD response, or one of a null body status, has a null
    // body (`res.body === null`), whatever bytes came.
    const noBody = method === 'HEAD' || NULL_BODY_STATUSES.has(head.status);
    try {
      if (noBody) handler.discard();
      else handler.decodeWith(createDecoders(headerValue(head.headers, 'content-encoding')));
    } catch (err) {
      handler.abort(err);
      throw fetchFailed(err);
    }
    const { status } = head;
    handler.onEnded((t, received) => markFetchTiming(out.url.href, startTime, redirects > 0, status, t, received));
    // The Fetch standard checks integrity before the response is returned, over the whole body.
    if (integrity !== '') await verifyIntegrity(noBody ? null : handler, integrity, signal);
    try {
      const href = url.hash === '' ? url.href : url.href.replace(/#.*$/, '');
      return newFetchResponse(
        noBody ? null : handler,
        { status: head.status, statusText: head.statusText },
        head.headers,
        href,
        redirects > 0,
      );
    } catch (err) {
      handler.abort(err);
      throw fetchFailed(err);
    }
  }
}
