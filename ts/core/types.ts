// Public option, handler and result shapes of the Dispatcher interface (spec: Resources and fields).
import type { Duplex, Readable, Writable } from 'node:stream';
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyReadable } from '../api/body.js';

export type HeaderValue = string | string[] | undefined;
export type LibHeaders =
  | Record<string, number | string | string[] | undefined>
  | string[]
  | Iterable<[string, string | string[] | undefined]>
  | null;

export type HttpMethod =
  | 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH' | 'QUERY'
  | (string & {});

export type RequestBody =
  | string | Buffer | Uint8Array | Readable | Iterable<string | Buffer | Uint8Array>
  | AsyncIterable<string | Buffer | Uint8Array> | null;

/** A body made afresh for each attempt, so redirects and retries can send a streamed body again. */
export type BodyFactory = () => RequestBody;

export interface DispatchOptions {
  origin?: string | URL;
  path: string;
  method: HttpMethod;
  body?: RequestBody | BodyFactory;
  headers?: LibHeaders;
  query?: Record<string, unknown> | null;
  idempotent?: boolean;
  blocking?: boolean;
  upgrade?: string | null;
  reset?: boolean;
  headersTimeout?: number | null;
  bodyTimeout?: number | null;
  expectContinue?: boolean;
  throwOnError?: boolean;
  // Extensions read by interceptors; the dispatcher passes them through untouched.
  maxRedirections?: number;
  dumpMaxSize?: number;
  abortOnDumped?: boolean;
  waitForTrailers?: boolean;
  retryOptions?: RetryOptions;
  [key: string]: unknown;
}

export type AbortSignalLike = AbortSignal | EventEmitter;

export interface RequestOptions<TOpaque = null> extends DispatchOptions {
  opaque?: TOpaque;
  signal?: AbortSignalLike | null;
  onInfo?: InfoHandler | null;
  highWaterMark?: number;
  /** 'raw': headers (and onInfo's) as the flat [name, value, ...] list received. */
  responseHeaders?: 'raw' | null;
}

/**
 * When each phase of a request ended, in ms on `performance.now()`'s clock (a ferro extension,
 * measured in the engine). A phase that did not happen is 0: `dns`, `connect` and `tls` on a reused
 * connection (only a connection's first request reports them), `tls` over http, `dns` for an IP
 * address; `end` until the response has ended.
 */
export interface RequestTimings {
  /** The request entered the dispatcher. */
  readonly queued: number;
  /** Its connection's host name was resolved. */
  readonly dns: number;
  /** Its connection's socket was connected (through a proxy: the tunnel was handed over). */
  readonly connect: number;
  /** Its connection's TLS handshake finished. */
  readonly tls: number;
  /** The whole request (head and body) was handed to the socket (its last write began). */
  readonly requestSent: number;
  /** The response head arrived (the first one: a 1xx's). */
  readonly firstByte: number;
  /** The response ended (its last body byte, or trailers). */
  readonly end: number;
}

export interface DispatchController {
  readonly aborted: boolean;
  readonly paused: boolean;
  readonly reason: Error | null;
  readonly rawHeaders: Buffer[] | null;
  readonly rawTrailers: Buffer[] | null;
  /** ferro: the request's timings, from its response head on (undefined before, and for mocks). */
  readonly timings?: RequestTimings | undefined;
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

export type IncomingHeaders = Record<string, string | string[]>;

export interface DispatchHandler {
  onRequestStart?(controller: DispatchController, context: object): void;
  onRequestUpgrade?(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void;
  onResponseStart?(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void;
  onResponseData?(controller: DispatchController, chunk: Buffer): void;
  onResponseEnd?(controller: DispatchController, trailers: IncomingHeaders): void;
  onResponseError?(controller: DispatchController, error: Error): void;
  onBodySent?(chunk: Buffer): void;
  /** The whole request (head and body) was sent. */
  onRequestSent?(): void;
  /** A response message (1xx included) began to arrive. */
  onResponseStarted?(): void;
  /** Legacy (Dispatcher 1) callbacks, accepted through the adapter. */
  onConnect?(abort: (err?: Error) => void, context?: object): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean | void;
  onData?(chunk: Buffer): boolean | void;
  onComplete?(rawTrailers: Buffer[] | null): void;
  onError?(err: Error): void;
  onUpgrade?(statusCode: number, rawHeaders: Buffer[] | string[] | null, socket: Duplex): void;
}

export interface ResponseData<TOpaque = null> {
  statusCode: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: BodyReadable;
  trailers: Record<string, string>;
  opaque: TOpaque;
  context: object;
  /** ferro: the request's timings; `end` is filled in when the body has ended. */
  timings?: RequestTimings | undefined;
}

export type InfoHandler = (info: { statusCode: number; headers: Record<string, string | string[]> }) => void;

export interface StreamFactoryData<TOpaque = null> {
  statusCode: number;
  headers: IncomingHttpHeaders;
  opaque: TOpaque;
  context: object;
  onInfo?: InfoHandler | null;
  /** ferro: the request's timings up to its response head; `end` is 0 here (the body follows). */
  timings?: RequestTimings | undefined;
}
export type StreamFactory<TOpaque = null> = (data: StreamFactoryData<TOpaque>) => Writable;
export interface StreamData<TOpaque = null> {
  opaque: TOpaque;
  trailers: Record<string, string>;
  context: object;
}

export interface PipelineOptions<TOpaque = null> extends RequestOptions<TOpaque> {
  /** The handler returns an object-mode stream; the Duplex reads objects. */
  objectMode?: boolean;
}
export interface PipelineHandlerData<TOpaque = null> {
  statusCode: number;
  headers: IncomingHttpHeaders;
  opaque: TOpaque;
  body: Readable;
  context: object;
  onInfo: InfoHandler | null;
  /** ferro: the request's timings up to its response head; `end` is filled in when it ends. */
  timings?: RequestTimings | undefined;
}
export type PipelineHandler<TOpaque = null> = (data: PipelineHandlerData<TOpaque>) => Readable;

export type DispatchFn = (options: DispatchOptions, handler: DispatchHandler) => boolean;
export type DispatcherComposeInterceptor = (dispatch: DispatchFn) => DispatchFn;

// RetryHandler's policy (handler/retry-options.ts holds its defaults and validation). The shapes
// are undici's (types/retry-handler.d.ts), so policies typed against undici's compile here.
export type RetryState = {
  /** How many attempts have failed so far, this one included (1 for the first failure). */
  counter: number;
};

/** What a policy is told: the attempt count and the request (its `retryOptions` with every default filled in). */
export type RetryContext = {
  state: RetryState;
  opts: DispatchOptions & { retryOptions?: RetryOptions };
};

/**
 * Decides about one failed attempt: call `callback(null)` to retry (after any wait), or
 * `callback(err)` to give up with `err`. A policy may return its timer (the type says void, as
 * undici's does) so that an abort can cancel the wait.
 */
export type OnRetryCallback = (result?: Error | null) => void;
export type RetryCallback = (
  err: Error,
  context: { state: RetryState; opts: DispatchOptions & { retryOptions?: RetryOptions } },
  callback: OnRetryCallback,
) => void;

export interface RetryOptions {
  retry?: RetryCallback;
  maxRetries?: number;
  maxTimeout?: number;
  minTimeout?: number;
  timeoutFactor?: number;
  retryAfter?: boolean;
  methods?: HttpMethod[];
  statusCodes?: number[];
  errorCodes?: string[];
  /** false: once retries run out, a retryable status is delivered as a response, not an error. */
  throwOnError?: boolean;
}

export type ResolvedRetryOptions = Required<RetryOptions>;
