// Revalidating a stored response (RFC 9111 §4.3): the conditional request's answer either
// refreshes the stored response (304: headers merged, served from the store), lets a stale one
// stand in for an error (RFC 5861 stale-if-error), or replaces it (anything else, passed through).
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { RequestAbortedError } from '../core/errors.js';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';
import { followedRedirects } from '../handler/redirect-handler.js';
import { CacheWriteHandler } from './cache-handler.js';
import { continueWithStored, SwitchController, type StoredReply } from './cached-response.js';
import type { CacheKey, CacheValue } from './cache-store.js';
import {
  currentAge,
  mergeNotModified,
  notModifiedMatches,
  planStore,
  servedHeaders,
  STALE_IF_ERROR_STATUSES,
} from './policy.js';
import { answeredByKey } from './redirect-chain.js';
import type { HeaderRecord } from './request-headers.js';
import { writeWhole, type CacheContext } from './store-writer.js';

export class RevalidationHandler implements DispatchHandler {
  readonly #ctx: CacheContext;
  readonly #key: CacheKey;
  readonly #entry: CacheValue;
  readonly #body: Buffer;
  readonly #staleOnError: boolean;
  readonly #handler: DispatchHandler;
  readonly #controller = new SwitchController();
  readonly #requestTime = Date.now();
  readonly #retry: (handler: DispatchHandler) => void;
  #passThrough: CacheWriteHandler | null = null;
  /** The request context: it records the redirects a redirect interceptor below followed. */
  #context: object | undefined;
  // A 304 naming another validator updates nothing: the request is sent again, unconditionally.
  #retrying = false;
  // The stored answer to serve once the origin's response is over; null while none applies.
  #reply: StoredReply | null = null;

  constructor(
    ctx: CacheContext,
    key: CacheKey,
    entry: CacheValue,
    body: Buffer,
    staleOnError: boolean,
    handler: DispatchHandler,
    retry: (handler: DispatchHandler) => void,
  ) {
    this.#retry = retry;
    this.#ctx = ctx;
    this.#key = key;
    this.#entry = entry;
    this.#body = body;
    this.#staleOnError = staleOnError;
    this.#handler = handler;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#controller.target = controller;
    this.#context = context;
    this.#handler.onRequestStart?.(this.#controller, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#controller.target = controller;
    this.#handler.onRequestUpgrade?.(this.#controller, statusCode, headers, socket);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#controller.target = controller;
    // Only the URL that was stored speaks for it: a 304 or an error from where a redirect led
    // (another origin above all) neither validates it nor lets it stand in stale.
    const own = answeredByKey(followedRedirects(this.#context), this.#key);
    if (statusCode === 304) {
      if (own && notModifiedMatches(this.#entry, headers)) this.#reply = this.#refresh(headers);
      else this.#retrying = true;
      return;
    }
    if (own && this.#staleOnError && STALE_IF_ERROR_STATUSES.has(statusCode)) {
      this.#reply = this.#stale();
      return;
    }
    this.#passThrough = new CacheWriteHandler(this.#ctx, this.#key, this.#handler, this.#context);
    this.#passThrough.onResponseStart(this.#controller, statusCode, headers, statusMessage);
  }

  onResponseData(_controller: DispatchController, chunk: Buffer): void {
    // The body of a 304 or of an error being replaced by the stored response is dropped.
    this.#passThrough?.onResponseData(this.#controller, chunk);
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.#passThrough !== null) this.#passThrough.onResponseEnd(this.#controller, trailers);
    else if (this.#reply !== null) continueWithStored(this.#handler, this.#controller, this.#reply);
    else if (this.#retrying && !this.#controller.abortedByHandler) this.#retry(this.#continuation());
  }

  /** The handler for the unconditional retry: the caller's request goes on, under the same controller. */
  #continuation(): DispatchHandler {
    const sw = this.#controller;
    const handler = this.#handler;
    return {
      onRequestStart: (c) => {
        sw.target = c;
        // An abort that came while no request was running is applied now.
        if (sw.abortedByHandler) c.abort(new RequestAbortedError());
      },
      onResponseStart: (c, statusCode, headers, statusMessage) => {
        sw.target = c;
        handler.onResponseStart?.(sw, statusCode, headers, statusMessage);
      },
      onResponseData: (_c, chunk) => handler.onResponseData?.(sw, chunk),
      onResponseEnd: (_c, trailers) => handler.onResponseEnd?.(sw, trailers),
      onResponseError: (_c, err) => handler.onResponseError?.(sw, err),
    };
  }

  onResponseError(_controller: DispatchController, error: Error): void {
    if (this.#passThrough !== null) {
      this.#passThrough.onResponseError(this.#controller, error);
      return;
    }
    // The origin failed before answering: a stale response may stand in (stale-if-error).
    if (this.#reply === null && this.#staleOnError && answeredByKey(followedRedirects(this.#context), this.#key)) this.#reply = this.#stale();
    if (this.#reply !== null && !this.#controller.abortedByHandler) {
      continueWithStored(this.#handler, this.#controller, this.#reply);
      return;
    }
    this.#handler.onResponseError?.(this.#controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  /** The stored response refreshed by a 304, stored again with its new freshness. */
  #refresh(update: IncomingHeaders): StoredReply {
    const now = Date.now();
    const headers = mergeNotModified(this.#entry.headers, update);
    const value = planStore({
      type: this.#ctx.type,
      cacheByDefault: this.#ctx.cacheByDefault,
      statusCode: this.#entry.statusCode,
      statusMessage: this.#entry.statusMessage,
      headers,
      requestHeaders: (this.#key.headers ?? {}) as HeaderRecord,
      requestTime: this.#requestTime,
      responseTime: now,
    });
    if (value !== null) writeWhole(this.#ctx.store, this.#key, value, this.#body);
    return {
      statusCode: this.#entry.statusCode,
      statusMessage: this.#entry.statusMessage,
      headers: { ...(value?.headers ?? headers), age: String(value === null ? 0 : currentAge(value, now)) },
      body: this.#body,
    };
  }

  #stale(): StoredReply {
    return {
      statusCode: this.#entry.statusCode,
      statusMessage: this.#entry.statusMessage,
      headers: servedHeaders(this.#entry, Date.now()),
      body: this.#body,
    };
  }
}
