// The user-facing half of a mock: MockInterceptor says what to match and what to reply, MockScope
// how often and how late. Each reply() registers one MockDispatch on the pool that made it.
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError } from '../core/errors.js';
import { withQuery } from '../core/headers.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DispatchOptions } from '../core/types.js';
import { normalizePath } from './mock-request.js';

type PathMatcher = string | RegExp | ((path: string) => boolean);
type HeaderMatcher = string | RegExp | ((value: string) => boolean);

/** How a reply is produced, beyond what MockDispatch.data shows. */
export interface ReplySpec {
  /** reply(callback): everything about the reply is computed per request. */
  callback?: MockInterceptor.MockReplyOptionsCallback<object>;
  defaultHeaders: IncomingHttpHeaders;
  defaultTrailers: Record<string, string>;
  contentLength: boolean;
}

const specs = new WeakMap<MockInterceptor.MockDispatch, ReplySpec>();

/** The reply recipe of a registered dispatch (absent for dispatches not made by reply()). */
export function replySpecOf(dispatch: MockInterceptor.MockDispatch): ReplySpec | undefined {
  return specs.get(dispatch);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof RegExp) return 'a RegExp';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
}

function isMatcher(value: unknown): value is string | RegExp | ((v: string) => boolean) {
  return typeof value === 'string' || value instanceof RegExp || typeof value === 'function';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The scope of one registered reply: how many times it answers and after what delay. */
export class MockScope<TData extends object = object> {
  readonly #dispatch: MockInterceptor.MockDispatch<TData>;

  constructor(mockDispatch: MockInterceptor.MockDispatch<TData>) {
    this.#dispatch = mockDispatch;
  }

  /** Waits `waitInMs` milliseconds before replying. */
  delay(waitInMs: number): MockScope<TData> {
    if (typeof waitInMs !== 'number' || !Number.isInteger(waitInMs) || waitInMs <= 0) {
      throw new InvalidArgumentError('waitInMs must be a valid integer > 0');
    }
    this.#dispatch.delay = waitInMs;
    return this;
  }

  /** Replies to every matching request, never used up. */
  persist(): MockScope<TData> {
    this.#dispatch.persist = true;
    return this;
  }

  /** Replies to `repeatTimes` matching requests (persist() overrides this). */
  times(repeatTimes: number): MockScope<TData> {
    if (typeof repeatTimes !== 'number' || !Number.isInteger(repeatTimes) || repeatTimes <= 0) {
      throw new InvalidArgumentError('repeatTimes must be a valid integer > 0');
    }
    this.#dispatch.times = repeatTimes;
    return this;
  }
}

/** Matching criteria for one route of a mock pool, and the builder of its reply. */
export class MockInterceptor {
  readonly #options: MockInterceptor.Options;
  readonly #dispatches: MockInterceptor.MockDispatch[];
  #defaultHeaders: IncomingHttpHeaders = {};
  #defaultTrailers: Record<string, string> = {};
  #contentLength = false;

  constructor(options: MockInterceptor.Options, mockDispatches: MockInterceptor.MockDispatch[]) {
    if (!isPlainObject(options)) throw new InvalidArgumentError('opts must be an object');
    const { path, method = 'GET', body, headers, query, ignoreTrailingSlash } = options;
    if (path === undefined) {
      throw new InvalidArgumentError('opts.path must be defined');
    }
    if (!isMatcher(path)) {
      throw new InvalidArgumentError(`intercept(options): options.path must be a string, a RegExp or a function, got ${kind(path)}`);
    }
    if (!isMatcher(method)) {
      throw new InvalidArgumentError(`intercept(options): options.method must be a string, a RegExp or a function, got ${kind(method)}`);
    }
    if (body !== undefined && !isMatcher(body)) {
      throw new InvalidArgumentError(`intercept(options): options.body must be a string, a RegExp or a function, got ${kind(body)}`);
    }
    let headerMatchers: MockInterceptor.Options['headers'];
    if (typeof headers === 'function' || headers === undefined) {
      headerMatchers = headers;
    } else if (isPlainObject(headers)) {
      const checked: Record<string, HeaderMatcher> = {};
      for (const [name, matcher] of Object.entries(headers)) {
        if (typeof matcher === 'number') checked[name] = String(matcher);
        else if (isMatcher(matcher)) checked[name] = matcher;
        else {
          throw new InvalidArgumentError(
            `intercept(options): header '${name}' must be matched by a string, a RegExp or a function, got ${kind(matcher)}`,
          );
        }
      }
      headerMatchers = checked;
    } else {
      throw new InvalidArgumentError(
        `intercept(options): options.headers must be an object of matchers or a function, got ${kind(headers)}`,
      );
    }
    if (query != null && !isPlainObject(query)) {
      throw new InvalidArgumentError(`intercept(options): options.query must be an object, got ${kind(query)}`);
    }
    if (ignoreTrailingSlash !== undefined && typeof ignoreTrailingSlash !== 'boolean') {
      throw new InvalidArgumentError(`intercept(options): options.ignoreTrailingSlash must be a boolean, got ${kind(ignoreTrailingSlash)}`);
    }
    if (!Array.isArray(mockDispatches)) throw new InvalidArgumentError('MockInterceptor needs the array of its pool\'s dispatches');
    // String paths are stored in the normalized form requests are compared in.
    // An absolute URL stands for its path and query (undici parses intercept paths as URLs).
    const relative = typeof path === 'string' && /^https?:\/\//i.test(path) ? pathOf(path) : path;
    const storedPath: PathMatcher =
      typeof relative === 'string' ? normalizePath(withQuery(relative, query)) : relative;
    this.#options = {
      path: storedPath,
      method: typeof method === 'string' ? method.toUpperCase() : method,
      body,
      headers: headerMatchers,
      query: query ?? undefined,
      ignoreTrailingSlash: ignoreTrailingSlash === true,
    };
    this.#dispatches = mockDispatches;
  }

  /** Replies with whatever `replyOptionsCallback` returns for each request. */
  reply<TData extends object = object>(replyOptionsCallback: MockInterceptor.MockReplyOptionsCallback<TData>): MockScope<TData>;
  /** Replies with `statusCode`, `data` (a string, Buffer, JSON-serialised object, or a function of the request) and options. */
  reply<TData extends object = object>(
    statusCode: number,
    data?: TData | Buffer | string | MockInterceptor.MockResponseDataHandler<TData>,
    responseOptions?: MockInterceptor.MockResponseOptions,
  ): MockScope<TData>;
  reply<TData extends object = object>(
    statusOrCallback: number | MockInterceptor.MockReplyOptionsCallback<TData>,
    data?: TData | Buffer | string | MockInterceptor.MockResponseDataHandler<TData>,
    responseOptions?: MockInterceptor.MockResponseOptions,
  ): MockScope<TData> {
    const spec: ReplySpec = {
      defaultHeaders: { ...this.#defaultHeaders },
      defaultTrailers: { ...this.#defaultTrailers },
      contentLength: this.#contentLength,
    };
    if (typeof statusOrCallback === 'function') {
      spec.callback = statusOrCallback as MockInterceptor.MockReplyOptionsCallback<object>;
      return this.#register<TData>({ error: null, data: '', headers: spec.defaultHeaders, trailers: spec.defaultTrailers }, spec);
    }
    checkStatus(statusOrCallback, 'reply(statusCode)');
    const options = responseOptions === undefined ? {} : responseOptions;
    checkResponseOptions(options, 'reply(statusCode, data, responseOptions)');
    return this.#register<TData>(
      {
        error: null,
        statusCode: statusOrCallback,
        data: (data ?? '') as TData | string,
        headers: { ...spec.defaultHeaders, ...options.headers },
        trailers: { ...spec.defaultTrailers, ...options.trailers },
      },
      spec,
    );
  }

  /** Fails matching requests with `error` instead of replying. */
  replyWithError<TError extends Error = Error>(error: TError): MockScope {
    if (error === undefined) throw new InvalidArgumentError('error must be defined');
    if (error === null || typeof error !== 'object') {
      throw new InvalidArgumentError(`replyWithError(error): error must be an Error, got ${kind(error)}`);
    }
    return this.#register(
      { error, headers: {}, trailers: {} },
      { defaultHeaders: {}, defaultTrailers: {}, contentLength: false },
    );
  }

  /** Headers added to every reply registered after this call. */
  defaultReplyHeaders(headers: IncomingHttpHeaders): MockInterceptor {
    if (!isPlainObject(headers)) {
      throw new InvalidArgumentError(`defaultReplyHeaders(headers): headers must be an object, got ${kind(headers)}`);
    }
    this.#defaultHeaders = { ...this.#defaultHeaders, ...headers };
    return this;
  }

  /** Trailers added to every reply registered after this call. */
  defaultReplyTrailers(trailers: Record<string, string>): MockInterceptor {
    if (!isPlainObject(trailers)) {
      throw new InvalidArgumentError(`defaultReplyTrailers(trailers): trailers must be an object, got ${kind(trailers)}`);
    }
    this.#defaultTrailers = { ...this.#defaultTrailers, ...trailers };
    return this;
  }

  /** Adds a content-length header computed from the body to every reply registered after this call. */
  replyContentLength(): MockInterceptor {
    this.#contentLength = true;
    return this;
  }

  #register<TData extends object>(data: MockInterceptor.MockDispatchData<TData>, spec: ReplySpec): MockScope<TData> {
    const dispatch: MockInterceptor.MockDispatch<TData> = {
      ...this.#options,
      timesInvoked: 0,
      times: 1,
      persist: false,
      consumed: false,
      pending: true,
      data,
    };
    specs.set(dispatch as MockInterceptor.MockDispatch, spec);
    this.#dispatches.push(dispatch as MockInterceptor.MockDispatch);
    return new MockScope<TData>(dispatch);
  }
}

/** Throws unless `value` is an HTTP status code a server could send as a final response. */
export function checkStatus(value: unknown, where: string): void {
  if (value === undefined) throw new InvalidArgumentError('statusCode must be defined');
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 200 || value > 999) {
    throw new InvalidArgumentError(`${where}: statusCode must be an integer from 200 to 999, got ${kind(value)}`);
  }
}

/** Throws unless `value` is a valid MockResponseOptions object. */
export function checkResponseOptions(value: unknown, where: string): asserts value is MockInterceptor.MockResponseOptions {
  if (!isPlainObject(value)) throw new InvalidArgumentError(`${where}: responseOptions must be an object, got ${kind(value)}`);
  if (value.headers != null && !isPlainObject(value.headers)) {
    throw new InvalidArgumentError(`${where}: responseOptions.headers must be an object, got ${kind(value.headers)}`);
  }
  if (value.trailers != null && !isPlainObject(value.trailers)) {
    throw new InvalidArgumentError(`${where}: responseOptions.trailers must be an object, got ${kind(value.trailers)}`);
  }
}

// Type shapes, named as undici names them so that code typed against undici's mocks compiles.
export declare namespace MockInterceptor {
  interface Options {
    /** The path to match; a RegExp or function sees the path with its query sorted by name. */
    path: string | RegExp | ((path: string) => boolean);
    /** The method to match; GET when absent. */
    method?: string | RegExp | ((method: string) => boolean);
    /** The request body to match, as text. */
    body?: string | RegExp | ((body: string) => boolean);
    /** Header matchers by name (case-insensitive), or one function of all headers (lower-case names). */
    headers?: Record<string, string | RegExp | ((body: string) => boolean)> | ((headers: Record<string, string>) => boolean);
    /** Query parameters, appended to a string `path`. */
    query?: Record<string, unknown>;
    /** Ignore a trailing slash on the path; defaults to the pool's (and agent's) setting. */
    ignoreTrailingSlash?: boolean;
  }
  interface MockDispatch<TData extends object = object, TError extends Error = Error> extends Options {
    times: number | null;
    persist: boolean;
    consumed: boolean;
    data: MockDispatchData<TData, TError>;
    timesInvoked: number;
    pending: boolean;
    delay?: number;
  }
  interface MockDispatchData<TData extends object = object, TError extends Error = Error> extends MockResponseOptions {
    error: TError | null;
    statusCode?: number;
    data?: TData | string;
  }
  interface MockResponseOptions {
    headers?: IncomingHttpHeaders;
    trailers?: Record<string, string>;
  }
  interface MockResponseCallbackOptions {
    path: string;
    method: string;
    headers?: Headers | Record<string, string>;
    origin?: string;
    body?: RequestInit['body'] | DispatchOptions['body'] | null;
    [key: string]: unknown;
  }
  type MockResponseDataHandler<TData extends object = object> = (
    opts: MockResponseCallbackOptions,
  ) => TData | Buffer | string | Promise<TData | Buffer | string>;
  type MockReplyOptions<TData extends object = object> = {
    statusCode: number;
    data?: TData | Buffer | string;
    responseOptions?: MockResponseOptions;
  };
  type MockReplyOptionsCallback<TData extends object = object> = (
    opts: MockResponseCallbackOptions,
  ) => MockReplyOptions<TData> | Promise<MockReplyOptions<TData>>;
}

/** A mock dispatcher that requests can be intercepted on (MockPool, MockClient). */
export interface Interceptable extends Dispatcher {
  /** Registers a route for requests to this dispatcher's origin. */
  intercept(options: MockInterceptor.Options): MockInterceptor;
  /** Removes every registered route. */
  cleanMocks(): void;
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}
