// Handlers the cache interceptor puts between the origin and the caller: one stores a response
// while passing it through, one invalidates stored responses after a successful unsafe request.
import type { Writable } from 'node:stream';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';
import type { CacheKey } from './cache-store.js';
import { DecoratorHandler } from '../handler/decorator-handler.js';
import { followedRedirects } from '../handler/redirect-handler.js';
import { invalidatedPaths, planStore } from './policy.js';
import { foldChain } from './redirect-chain.js';
import type { HeaderRecord } from './request-headers.js';
import { openWriter, safeDelete, type CacheContext } from './store-writer.js';

/** Passes a response through to `handler`, copying it into the store when RFC 9111 allows. */
export class CacheWriteHandler extends DecoratorHandler {
  readonly #ctx: CacheContext;
  readonly #key: CacheKey;
  readonly #requestTime = Date.now();
  #writer: Writable | null = null;
  /** The request context: it records the redirects a redirect interceptor below followed. */
  #context: object | undefined;

  constructor(ctx: CacheContext, key: CacheKey, handler: DispatchHandler, context?: object) {
    super(handler);
    this.#ctx = ctx;
    this.#key = key;
    this.#context = context;
  }

  override onRequestStart(controller: DispatchController, context: object): void {
    this.#context = context;
    this.handler.onRequestStart?.(controller, context);
  }

  override onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    let value = planStore({
      type: this.#ctx.type,
      cacheByDefault: this.#ctx.cacheByDefault,
      statusCode,
      statusMessage: statusMessage ?? '',
      headers,
      requestHeaders: (this.#key.headers ?? {}) as HeaderRecord,
      requestTime: this.#requestTime,
      responseTime: Date.now(),
    });
    const hops = followedRedirects(this.#context);
    if (value !== null && hops !== undefined && hops.length > 0) value = foldChain(value, hops, this.#key, this.#ctx, Date.now());
    if (value !== null) {
      const writer = openWriter(this.#ctx.store, this.#key, value);
      writer?.on('error', () => {
        if (this.#writer === writer) this.#writer = null;
      });
      this.#writer = writer;
    }
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  override onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#writer?.write(chunk);
    this.handler.onResponseData?.(controller, chunk);
  }

  override onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    // Committed before the caller hears the end, so its next request can already hit.
    this.#writer?.end();
    this.#writer = null;
    this.handler.onResponseEnd?.(controller, trailers);
  }

  override onResponseError(controller: DispatchController, error: Error): void {
    // Destroyed unfinished: a partial body is never committed.
    this.#writer?.destroy();
    this.#writer = null;
    this.handler.onResponseError?.(controller, error);
  }
}

/** After a non-error answer to an unsafe method, drops what is stored for the URIs it touched. */
export class InvalidationHandler extends DecoratorHandler {
  readonly #ctx: CacheContext;
  readonly #origin: string;
  readonly #path: string;

  constructor(ctx: CacheContext, origin: string, path: string, handler: DispatchHandler) {
    super(handler);
    this.#ctx = ctx;
    this.#origin = origin;
    this.#path = path;
  }

  override onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    for (const path of invalidatedPaths(this.#origin, this.#path, statusCode, headers)) {
      safeDelete(this.#ctx.store, { origin: this.#origin, method: 'GET', path });
    }
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
}
