// fetch() as the package exports it: the one implementation (fetch.ts, which works on Node's
// classes and the DOM lib's types internally) under ferro's own declared types (fetch-types.ts),
// so that a user's project needs no DOM lib and its `init.dispatcher` is ferro's Dispatcher.
import { fetch as fetchImpl } from './fetch.js';
import type { RequestInfo, RequestInit, Response } from './fetch-types.js';

/** `RequestInit` with the dispatcher to send through (undici's `RequestInit` has it too). */
export type FetchInit = RequestInit;

// Node's classes are what these interfaces describe; the cast only swaps one description for the other.
export const fetch = fetchImpl as unknown as (input: RequestInfo, init?: FetchInit) => Promise<Response>;
