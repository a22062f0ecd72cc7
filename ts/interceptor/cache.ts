// The cache interceptor: RFC 9111 client-side caching (shared or private) with RFC 5861's
// stale-while-revalidate and stale-if-error, over any store with the undici store interface.
import { withQuery } from '../core/headers.js';
import { spread } from '../core/spread.js';
import type { DispatchFn, DispatchHandler, DispatchOptions, DispatcherComposeInterceptor } from '../core/types.js';
import { markInterceptor } from '../dispatcher/compose-order.js';
import { detachedController } from '../handler/detached-controller.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { dropOnRedirect } from '../handler/redirect-handler.js';
import { CacheWriteHandler, InvalidationHandler } from '../cache/cache-handler.js';
import { bodyBuffer, serveStored } from '../cache/cached-response.js';
import {
  assertCacheStore,
  SAFE_METHODS,
  type CacheControlDirectives,
  type CacheKey,
  type CacheMethods,
  type CacheStore,
  type GetResult,
} from '../cache/cache-store.js';
import { MemoryCacheStore } from '../cache/memory-cache-store.js';
import {
  conditionalHeaders,
  CONDITIONAL_REQUEST_HEADERS,
  requestDirectives,
  reuse,
  servable,
  servedHeaders,
  staleIfErrorAllows,
  type CacheType,
} from '../cache/policy.js';
import { originOf } from '../cache/entry-key.js';
import { headerRecord, type HeaderRecord } from '../cache/request-headers.js';
import { RevalidationHandler } from '../cache/revalidation-handler.js';
import { safeDelete, safeGet, warnStore, type CacheContext } from '../cache/store-writer.js';

export interface CacheInterceptorOptions {
  /** Where responses are kept. Default: a new MemoryCacheStore. */
  store?: CacheStore;
  /** Safe methods whose responses are cached. Default ['GET']. */
  methods?: CacheMethods[];
  /** Lifetime in milliseconds for responses that give neither an explicit nor a heuristic one. */
  cacheByDefault?: number;
  /** 'shared' (default) or 'private' (also stores `private` responses, ignores s-maxage). */
  type?: CacheType;
  /** Only requests to these origins are cached (strings compare case-insensitively). */
  origins?: (string | RegExp)[];
}

// undici throws plain TypeErrors for these options; the words are its own (its `got` is a typeof).
function checkOptions(opts: unknown): asserts opts is CacheInterceptorOptions {
  if (typeof opts !== 'object' || opts === null) {
    throw new TypeError(`expected type of opts to be an Object, got ${opts === null ? 'null' : typeof opts}`);
  }
  const o = opts as CacheInterceptorOptions;
  if (o.methods !== undefined) {
    const methods: unknown = o.methods;
    if (!Array.isArray(methods)) {
      throw new TypeError(`expected type of opts.methods needs to be an array, got ${methods === null ? 'null' : typeof methods}`);
    }
    if (methods.length === 0) throw new TypeError('opts.methods needs to have at least one method');
    for (const m of methods) {
      if (!SAFE_METHODS.has(m)) {
        throw new TypeError(`element of opts.methods-array needs to be one of following values: ${[...SAFE_METHODS].join(', ')}, got ${String(m)}`);
      }
    }
  }
  const { cacheByDefault } = o;
  if (cacheByDefault !== undefined && typeof cacheByDefault !== 'number') {
    throw new TypeError(`expected opts.cacheByDefault to be number or undefined, got ${typeof cacheByDefault}`);
  }
  // undici takes any number; a negative or infinite lifetime means nothing, so ferro refuses it.
  if (cacheByDefault !== undefined && !(cacheByDefault >= 0 && Number.isFinite(cacheByDefault))) {
    throw new TypeError(`expected opts.cacheByDefault to be a non-negative finite number, got ${cacheByDefault}`);
  }
  if (o.type !== undefined && o.type !== 'shared' && o.type !== 'private') {
    throw new TypeError(`expected opts.type to be shared, private, or undefined, got ${typeof o.type}`);
  }
  if (o.origins !== undefined) {
    // undici throws a plain TypeError here, with these words.
    if (!Array.isArray(o.origins)) throw new TypeError(`expected opts.origins to be an array or undefined, got ${typeof o.origins}`);
    o.origins.forEach((origin: unknown, i) => {
      if (typeof origin !== 'string' && !(origin instanceof RegExp)) {
        throw new TypeError(`expected opts.origins[${i}] to be a string or RegExp, got ${typeof origin}`);
      }
    });
  }
}

const GATEWAY_TIMEOUT = { statusCode: 504, statusMessage: 'Gateway Timeout', headers: {}, body: Buffer.alloc(0) };

/** A conditional request revalidating `found`: its validators are the stored URL's, so no redirect carries them on. */
function revalidationOptions(opts: DispatchOptions, key: CacheKey, found: GetResult): DispatchOptions {
  const headers = { ...(key.headers as HeaderRecord), ...conditionalHeaders(found) };
  return { ...opts, headers, [dropOnRedirect]: CONDITIONAL_REQUEST_HEADERS } as DispatchOptions;
}

export function cache(options: CacheInterceptorOptions = {}): DispatcherComposeInterceptor {
  checkOptions(options);
  const store = options.store === undefined ? new MemoryCacheStore() : options.store;
  assertCacheStore(store, 'store');
  const methods = new Set<string>(options.methods ?? ['GET']);
  const ctx: CacheContext = { store, type: options.type ?? 'shared', cacheByDefault: options.cacheByDefault };
  // Compared with the serialized origin of where a request goes (lower case, no default port).
  const origins = options.origins?.map((o) => (typeof o === 'string' ? (originOf(o) ?? o.toLowerCase()) : o));
  const allowed = (origin: string): boolean =>
    origins === undefined || origins.some((o) => (typeof o === 'string' ? o === origin : o.test(origin)));
  // Background revalidations in flight (stale-while-revalidate): at most one per stored response.
  const revalidating = new Set<string>();
  // Lookups are numbered, and a background revalidation that ends records the number reached. An
  // asynchronous store (Redis) can answer a lookup begun before that end with the response just
  // revalidated: it is served stale without a second revalidation. Kept for the latest few only.
  let lookups = 0;
  const revalidatedAt = new Map<string, number>();

  return markInterceptor<DispatcherComposeInterceptor>((dispatch: DispatchFn, interceptorOrigin?: string | URL | null): DispatchFn => {
    // Where requests actually go. A Client or Pool passes its own origin: its requests go there
    // whatever `opts.origin` says, so that is what they are filed under (a request naming another
    // origin cannot plant a response under it). null: the dispatcher has no single origin that
    // can be trusted, nothing is cached. undefined (an Agent): each request goes to its own origin.
    const ownOrigin = interceptorOrigin === null ? null : originOf(interceptorOrigin);
    const originless = interceptorOrigin === null;
    /** Serves, revalidates or fetches once the store has answered. */
    const answer = (opts: DispatchOptions, handler: DispatchHandler, key: CacheKey, req: CacheControlDirectives, found: GetResult | undefined, lookup: number): boolean => {
      const now = Date.now();
      if (found !== undefined && !servable(found, ctx.type)) {
        // Written by a private cache sharing the store, say: never replayed, and dropped.
        (found.body as { destroy?: () => void } | null | undefined)?.destroy?.();
        safeDelete(store, key);
        found = undefined;
      }
      if (found === undefined || found.deleteAt <= now) {
        if (req['only-if-cached'] !== true) return dispatch(opts, new CacheWriteHandler(ctx, key, handler));
        serveStored(handler, GATEWAY_TIMEOUT);
        return true;
      }
      const decision = reuse(found, req, ctx.type, now);
      if (decision === 'revalidate' && req['only-if-cached'] === true) {
        serveStored(handler, GATEWAY_TIMEOUT);
        return true;
      }
      const body = bodyBuffer(found.body);
      const go = (bytes: Buffer): boolean => {
        if (decision === 'revalidate') {
          const staleOnError = staleIfErrorAllows(found, req, ctx.type, now);
          const retry = (h: DispatchHandler): void => void dispatch(opts, new CacheWriteHandler(ctx, key, h));
          return dispatch(revalidationOptions(opts, key, found), new RevalidationHandler(ctx, key, found, bytes, staleOnError, handler, retry));
        }
        serveStored(handler, {
          statusCode: found.statusCode,
          statusMessage: found.statusMessage,
          headers: servedHeaders(found, Date.now()),
          body: bytes,
        });
        if (decision === 'stale-while-revalidate') revalidateInBackground(opts, key, found, bytes, lookup);
        return true;
      };
      if (Buffer.isBuffer(body)) return go(body);
      body.then(go, (err: unknown) => {
        // An unreadable stored body is a miss.
        warnStore(store, err);
        dispatch(opts, new CacheWriteHandler(ctx, key, handler));
      });
      return true;
    };

    const revalidateInBackground = (opts: DispatchOptions, key: CacheKey, found: GetResult, body: Buffer, lookup: number): void => {
      const id = `${key.method} ${key.origin}${key.path} ${JSON.stringify(found.vary ?? {})}`;
      if (revalidating.has(id)) return;
      const ended = revalidatedAt.get(id);
      if (ended !== undefined && lookup <= ended) return;
      revalidatedAt.delete(id);
      revalidating.add(id);
      const done = (): void => void revalidating.delete(id);
      const revalidated = (): void => {
        done();
        revalidatedAt.set(id, lookups);
        if (revalidatedAt.size > 256) revalidatedAt.delete(revalidatedAt.keys().next().value!);
      };
      const quiet: DispatchHandler = { onResponseEnd: revalidated, onResponseError: done };
      try {
        const retry = (h: DispatchHandler): void => void dispatch(opts, new CacheWriteHandler(ctx, key, h));
        dispatch(revalidationOptions(opts, key, found), new RevalidationHandler(ctx, key, found, body, false, quiet, retry));
      } catch {
        done();
      }
    };

    return (opts: DispatchOptions, handler: DispatchHandler): boolean => {
      if (originless) return dispatch(opts, handler);
      const named = originOf(opts.origin);
      const origin = ownOrigin ?? named;
      if (origin === null || opts.upgrade || !allowed(origin)) return dispatch(opts, handler);
      // A request naming no origin, or one that is not a URL ('localhost'), goes on with the real
      // one, so what runs below (a redirect interceptor above all) knows where it is.
      if (named === null) opts = spread(opts, { origin });
      let path: string;
      let headers: HeaderRecord;
      try {
        path = withQuery(opts.path, opts.query);
        headers = headerRecord(opts.headers);
      } catch {
        // Malformed input: the dispatcher reports it with its own typed error.
        return dispatch(opts, handler);
      }
      const method = opts.method;
      if (!SAFE_METHODS.has(method)) {
        if (method === 'CONNECT') return dispatch(opts, handler);
        return dispatch(opts, new InvalidationHandler(ctx, origin, path, toControllerHandler(handler)));
      }
      if (!methods.has(method)) return dispatch(opts, handler);
      // Conditional and range requests are the origin's to evaluate.
      if (CONDITIONAL_REQUEST_HEADERS.some((name) => headers[name] !== undefined)) return dispatch(opts, handler);
      const req = requestDirectives(headers);
      if (req['no-store'] === true) return dispatch(opts, handler);

      const key: CacheKey = { origin, method, path, headers };
      const target = toControllerHandler(handler);
      const lookup = ++lookups;
      const found = safeGet(store, key);
      if (found !== undefined && 'then' in found) {
        found
          .then((result) => answer(opts, target, key, req, result, lookup))
          .catch((err: Error) => target.onResponseError?.(detachedController, err));
        return true;
      }
      return answer(opts, target, key, req, found, lookup);
    };
  }, 'cache');
}
