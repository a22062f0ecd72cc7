// The requests a MockAgent has seen (MockCallHistory), each as a MockCallHistoryLog: the dispatch
// options with the URL already split into its parts, for assertions in tests.
import { InvalidArgumentError } from '../core/errors.js';
import { withQuery } from '../core/headers.js';
import type { DispatchOptions } from '../core/types.js';
import { bodyText } from './mock-request.js';

const PROPERTIES = [
  'protocol',
  'host',
  'port',
  'origin',
  'path',
  'hash',
  'searchParams',
  'fullUrl',
  'method',
  'body',
  'headers',
] as const;

type LogValue = string | Record<string, string | string[]> | null | undefined;

/** One recorded request. */
export class MockCallHistoryLog {
  /** `'http:'`, `'https:'`, … */
  protocol: string;
  /** Host name and, when not the default, port. */
  host: string;
  /** The port as written, or `''` for the scheme's default. */
  port: string;
  /** Scheme, host and port, e.g. `'http://localhost:3000'`. */
  origin: string;
  /** The pathname, without search parameters. */
  path: string;
  /** The fragment with its `#`, or `''`. */
  hash: string;
  /** The whole URL, query and fragment included. */
  fullUrl: string;
  method: string;
  /** Search parameters by name (the last value of a repeated name). */
  searchParams: Record<string, string>;
  /** The request body as text; undefined when there was none. */
  body: string | null | undefined;
  headers: Record<string, string | string[]> | null | undefined;

  constructor(requestInit: DispatchOptions = { path: '/', method: 'GET' }) {
    const { origin, path, query, method } = requestInit;
    let url: URL;
    try {
      url = new URL(withQuery(typeof path === 'string' ? path : '/', query), origin == null ? undefined : String(origin));
    } catch {
      throw new InvalidArgumentError(
        `MockCallHistoryLog: cannot build a URL from origin ${JSON.stringify(String(origin))} and path ${JSON.stringify(path)}`,
      );
    }
    this.protocol = url.protocol;
    this.host = url.host;
    this.port = url.port;
    this.origin = url.origin;
    this.path = url.pathname;
    this.hash = url.hash;
    this.fullUrl = url.href;
    this.method = typeof method === 'string' ? method : 'GET';
    this.searchParams = Object.fromEntries(url.searchParams);
    const body = requestInit.body;
    this.body = body === null ? null : bodyText(body);
    // The caller's own headers value, as undici keeps it (assertions compare against what was passed).
    this.headers = requestInit.headers as MockCallHistoryLog['headers'];
  }

  /** The log's properties in a Map, in a fixed order. */
  toMap(): Map<MockCallHistoryLog.MockCallHistoryLogProperties, LogValue> {
    return new Map(PROPERTIES.map((name) => [name, this[name]]));
  }

  /** `name->value` pairs joined with `|`; objects as JSON, the body in double quotes. */
  toString(): string {
    return PROPERTIES.map((name) => {
      const value = this[name];
      let text: string;
      if (name === 'body' && typeof value === 'string') text = `"${value}"`;
      else if (value !== null && typeof value === 'object') text = JSON.stringify(value);
      else text = String(value);
      return `${name}->${text}`;
    }).join('|');
  }
}

// Type names as undici spells them, so that code typed against undici's mocks compiles.
export declare namespace MockCallHistoryLog {
  type MockCallHistoryLogProperties = (typeof PROPERTIES)[number];
}

/** Adds a log; kept off the public surface (only the agent records). */
export const kRecordCall = Symbol('ferro.mockCallHistory.record');

type Field = MockCallHistoryLog.MockCallHistoryLogProperties;

function checkParameter(value: unknown, where: string): asserts value is MockCallHistory.FilterCallsParameter {
  if (value === null || value === undefined || typeof value === 'string' || value instanceof RegExp) return;
  throw new InvalidArgumentError(`${where}: expected a string, a RegExp, null or undefined, got ${typeof value}`);
}

function fieldMatches(log: MockCallHistoryLog, field: Field, parameter: MockCallHistory.FilterCallsParameter): boolean {
  const value = log[field];
  if (parameter instanceof RegExp) {
    if (value === null || value === undefined) return false;
    parameter.lastIndex = 0;
    return parameter.test(typeof value === 'object' ? JSON.stringify(value) : value);
  }
  return value === parameter;
}

/** The ordered list of requests a MockAgent recorded. */
export class MockCallHistory {
  readonly #logs: MockCallHistoryLog[] = [];
  readonly name: string | undefined;

  constructor(name?: string) {
    this.name = name;
  }

  [kRecordCall](opts: DispatchOptions): MockCallHistoryLog {
    const log = new MockCallHistoryLog(opts);
    this.#logs.push(log);
    return log;
  }

  calls(): MockCallHistoryLog[] {
    return [...this.#logs];
  }

  firstCall(): MockCallHistoryLog | undefined {
    return this.#logs[0];
  }

  lastCall(): MockCallHistoryLog | undefined {
    return this.#logs[this.#logs.length - 1];
  }

  /** The call at 1-based `position`. */
  nthCall(position: number): MockCallHistoryLog | undefined {
    if (typeof position !== 'number') {
      throw new InvalidArgumentError('nthCall must be called with a number');
    }
    if (!Number.isInteger(position)) {
      throw new InvalidArgumentError('nthCall must be called with an integer');
    }
    if (position <= 0) {
      throw new InvalidArgumentError('nthCall must be called with a positive value. use firstCall or lastCall instead');
    }
    return this.#logs[position - 1];
  }

  /**
   * Calls kept by a predicate, by a RegExp tested against each log's toString(), or by an object
   * of per-field criteria combined with `operator` (`'OR'` by default, or `'AND'`).
   */
  filterCalls(
    criteria: MockCallHistory.FilterCallsFunctionCriteria | MockCallHistory.FilterCallsObjectCriteria | RegExp,
    options?: MockCallHistory.FilterCallsOptions,
  ): MockCallHistoryLog[] {
    if (typeof criteria === 'function') return this.#logs.filter((log) => criteria(log));
    if (criteria instanceof RegExp) {
      return this.#logs.filter((log) => {
        criteria.lastIndex = 0;
        return criteria.test(log.toString());
      });
    }
    if (criteria === null || typeof criteria !== 'object' || Array.isArray(criteria)) {
      throw new InvalidArgumentError('filterCalls(criteria): criteria must be a function, a RegExp or an object of field criteria');
    }
    const operator = String(options?.operator ?? 'OR').toUpperCase();
    if (operator !== 'OR' && operator !== 'AND') {
      throw new InvalidArgumentError(`filterCalls(criteria, options): options.operator must be 'OR' or 'AND', got ${JSON.stringify(options?.operator)}`);
    }
    const entries = Object.entries(criteria);
    for (const [field, parameter] of entries) {
      if (!(PROPERTIES as readonly string[]).includes(field)) {
        throw new InvalidArgumentError(`filterCalls(criteria): unknown field '${field}'; fields are ${PROPERTIES.join(', ')}`);
      }
      checkParameter(parameter, `filterCalls(criteria): criteria.${field}`);
    }
    if (entries.length === 0) return this.calls();
    const test = (log: MockCallHistoryLog, [field, parameter]: [string, unknown]): boolean =>
      fieldMatches(log, field as Field, parameter as MockCallHistory.FilterCallsParameter);
    // Logs keep their recorded order whichever criterion kept them, and appear once.
    return this.#logs.filter((log) =>
      operator === 'AND' ? entries.every((entry) => test(log, entry)) : entries.some((entry) => test(log, entry)),
    );
  }

  #by(field: Field, parameter: MockCallHistory.FilterCallsParameter, method: string): MockCallHistoryLog[] {
    checkParameter(parameter, `${method}(criteria)`);
    return this.#logs.filter((log) => fieldMatches(log, field, parameter));
  }

  filterCallsByProtocol(protocol: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('protocol', protocol, 'filterCallsByProtocol');
  }
  filterCallsByHost(host: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('host', host, 'filterCallsByHost');
  }
  filterCallsByPort(port: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('port', port, 'filterCallsByPort');
  }
  filterCallsByOrigin(origin: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('origin', origin, 'filterCallsByOrigin');
  }
  filterCallsByPath(path: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('path', path, 'filterCallsByPath');
  }
  filterCallsByHash(hash: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('hash', hash, 'filterCallsByHash');
  }
  filterCallsByFullUrl(fullUrl: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('fullUrl', fullUrl, 'filterCallsByFullUrl');
  }
  filterCallsByMethod(method: MockCallHistory.FilterCallsParameter): MockCallHistoryLog[] {
    return this.#by('method', method, 'filterCallsByMethod');
  }

  /** Forgets every recorded call. */
  clear(): void {
    this.#logs.length = 0;
  }

  *[Symbol.iterator](): Generator<MockCallHistoryLog> {
    yield* this.#logs;
  }
}

export declare namespace MockCallHistory {
  type FilterCallsOperator = 'AND' | 'OR';
  interface FilterCallsOptions {
    /** How several object criteria combine; case-insensitive. */
    operator?: FilterCallsOperator | Lowercase<FilterCallsOperator>;
  }
  type FilterCallsFunctionCriteria = (log: MockCallHistoryLog) => boolean;
  /** A string (strict equality), a RegExp, or null / undefined (the field is exactly that). */
  type FilterCallsParameter = string | RegExp | undefined | null;
  interface FilterCallsObjectCriteria extends Record<string, FilterCallsParameter> {
    protocol?: FilterCallsParameter;
    host?: FilterCallsParameter;
    port?: FilterCallsParameter;
    origin?: FilterCallsParameter;
    path?: FilterCallsParameter;
    hash?: FilterCallsParameter;
    fullUrl?: FilterCallsParameter;
    method?: FilterCallsParameter;
  }
}
