// The WHATWG Cache API (Service Workers §5.4), in memory: a list of request → response pairs.
// Responses are kept as a clone whose body is read once at put(); each match hands out a clone of
// that, so a stored response can be read any number of times.
import { fetch } from './fetch.js';
import { requestMatches, varyFields } from './cache-match.js';
import type { CacheQueryOptions } from './cache-types.js';

export type RequestInfo = Request | string | URL;

interface Entry {
  request: Request;
  response: Response;
}

const kConstruct = Symbol('Cache construct');

function isHttp(url: string): boolean {
  return url.startsWith('http:') || url.startsWith('https:');
}

function toRequest(info: RequestInfo): Request {
  return info instanceof Request ? info : new Request(info);
}

function checkCacheable(prefix: string, request: Request): void {
  if (!isHttp(request.url) || request.method !== 'GET') {
    throw new TypeError(`${prefix}: Expected an http/s scheme when method is not GET`);
  }
}

function checkResponse(prefix: string, response: Response): void {
  if (response.status === 206) throw new TypeError(`${prefix}: Got 206 status`);
  if (varyFields(response).includes('*')) throw new TypeError(`${prefix}: Got * vary field value`);
}

export class WebCache {
  #entries: Entry[] = [];

  /** @internal Caches come from `caches.open()`. */
  constructor(key?: symbol) {
    if (key !== kConstruct) throw new TypeError('Illegal constructor');
  }

  async match(request: RequestInfo, options?: CacheQueryOptions): Promise<Response | undefined> {
    return (await this.matchAll(request, options))[0];
  }

  async matchAll(request?: RequestInfo, options?: CacheQueryOptions): Promise<readonly Response[]> {
    const entries = request === undefined ? this.#entries : this.#query(request, options);
    if (entries === null) return [];
    return entries.map((e) => e.response.clone());
  }

  async add(request: RequestInfo): Promise<undefined> {
    return this.addAll([request]);
  }

  async addAll(requests: RequestInfo[]): Promise<undefined> {
    if (requests == null || typeof (requests as Iterable<RequestInfo>)[Symbol.iterator] !== 'function') {
      throw new TypeError('Cache.addAll: requests must be a sequence');
    }
    const list = [...requests].map((info) => {
      if (info === undefined) throw new TypeError('Cache.addAll: undefined is not a request');
      const r = toRequest(info);
      checkCacheable('Cache.addAll', r);
      return r;
    });
    const controller = new AbortController();
    // All fetched before any is stored: one failure stores none (the batch is atomic).
    const fetched = await Promise.all(
      list.map(async (request) => {
        const response = await fetch(request, { signal: controller.signal });
        if (response.status < 200 || response.status > 299 || response.status === 206) {
          controller.abort();
          throw new TypeError('Cache.addAll: Received an invalid status code or the request failed.');
        }
        if (varyFields(response).includes('*')) {
          controller.abort();
          throw new TypeError('Cache.addAll: invalid vary field value');
        }
        return { request, response: await settled(response) };
      }),
    ).catch((err: unknown) => {
      controller.abort();
      throw err;
    });
    for (const entry of fetched) this.#store(entry);
    return undefined;
  }

  async put(request: RequestInfo, response: Response): Promise<undefined> {
    if (!(response instanceof Response)) throw new TypeError('Cache.put: response must be a Response');
    const r = toRequest(request);
    checkCacheable('Cache.put', r);
    checkResponse('Cache.put', response);
    if (response.bodyUsed || response.body?.locked) throw new TypeError('Cache.put: Response body is locked or disturbed');
    this.#store({ request: r, response: await settled(response) });
    return undefined;
  }

  async delete(request: RequestInfo, options?: CacheQueryOptions): Promise<boolean> {
    const matched = this.#query(request, options);
    if (matched === null || matched.length === 0) return false;
    this.#entries = this.#entries.filter((e) => !matched.includes(e));
    return true;
  }

  async keys(request?: RequestInfo, options?: CacheQueryOptions): Promise<readonly Request[]> {
    const entries = request === undefined ? this.#entries : this.#query(request, options);
    return (entries ?? []).map((e) => e.request.clone());
  }

  /** Entries matching `info`; null for a non-GET Request without ignoreMethod (matches nothing). */
  #query(info: RequestInfo, options: CacheQueryOptions | undefined): Entry[] | null {
    const query = toRequest(info);
    if (info instanceof Request && query.method !== 'GET' && !options?.ignoreMethod) return null;
    return this.#entries.filter((e) => requestMatches(query, e.request, e.response, options));
  }

  /** Replaces what the request matched (Vary counted), as the batch put operation does. */
  #store(entry: Entry): void {
    this.#entries = this.#entries.filter((e) => !requestMatches(entry.request, e.request, e.response));
    this.#entries.push(entry);
  }
}

/**
 * A copy of the response whose body has been read to the end (as put() must, before it resolves;
 * the caller's response is consumed). A body that fails to read fails the put.
 */
async function settled(response: Response): Promise<Response> {
  const kept = response.clone();
  await response.arrayBuffer();
  return kept;
}

/** @internal */
export function newCache(): WebCache {
  return new WebCache(kConstruct);
}
