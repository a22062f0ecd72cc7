// The WHATWG fetch types as ferro declares them: its own, so that a project compiles with
// `lib: ["esnext"]` alone (no DOM lib) and with the DOM lib added without clashes. The runtime
// classes are Node's (whatwg-classes.ts); these interfaces describe them with undici's names.
import type { Blob, File } from 'node:buffer';
import type { ReadableStream } from 'node:stream/web';
import type { URL, URLSearchParams } from 'node:url';
import type { Dispatcher } from '../dispatcher/dispatcher.js';

/**
 * An iterator as WebIDL makes them (Headers / FormData `keys()`, …). The iterator helpers (`map`,
 * `filter`, …) are not declared: Node 20 lacks them at run time; Node 22+ has them. Kept this small,
 * Node's global Headers / FormData (@types/node, the DOM lib) are assignable to ferro's.
 */
export interface SpecIterator<T, TReturn = unknown, TNext = undefined> {
  next(...args: [] | [TNext]): IteratorResult<T, TReturn>;
}

export interface SpecIterableIterator<T> extends SpecIterator<T> {
  [Symbol.iterator](): SpecIterableIterator<T>;
}

export interface SpecIterable<T> {
  [Symbol.iterator](): SpecIterableIterator<T>;
}

export type HeadersInit = [string, string][] | Record<string, string | readonly string[]> | Headers;

export interface Headers extends SpecIterable<[string, string]> {
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  has(name: string): boolean;
  set(name: string, value: string): void;
  getSetCookie(): string[];
  forEach(callbackfn: (value: string, key: string, iterable: Headers) => void, thisArg?: unknown): void;
  keys(): SpecIterableIterator<string>;
  values(): SpecIterableIterator<string>;
  entries(): SpecIterableIterator<[string, string]>;
  [Symbol.iterator](): SpecIterableIterator<[string, string]>;
}

export interface HeadersConstructor {
  new (init?: HeadersInit): Headers;
  readonly prototype: Headers;
}

export type FormDataEntryValue = string | File;

export interface FormData {
  append(name: string, value: unknown, fileName?: string): void;
  set(name: string, value: unknown, fileName?: string): void;
  get(name: string): FormDataEntryValue | null;
  getAll(name: string): FormDataEntryValue[];
  has(name: string): boolean;
  delete(name: string): void;
  forEach(callbackfn: (value: FormDataEntryValue, key: string, iterable: FormData) => void, thisArg?: unknown): void;
  keys(): SpecIterableIterator<string>;
  values(): SpecIterableIterator<FormDataEntryValue>;
  entries(): SpecIterableIterator<[string, FormDataEntryValue]>;
  [Symbol.iterator](): SpecIterableIterator<[string, FormDataEntryValue]>;
}

export interface FormDataConstructor {
  new (): FormData;
  readonly prototype: FormData;
}

export type BodyInit =
  | ArrayBuffer
  | AsyncIterable<Uint8Array>
  | Blob
  | FormData
  | Iterable<Uint8Array>
  | NodeJS.ArrayBufferView
  | URLSearchParams
  | null
  | string;

/** The body members Request and Response share. */
export interface BodyMixin {
  readonly body: ReadableStream | null;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  blob(): Promise<Blob>;
  bytes(): Promise<Uint8Array>;
  formData(): Promise<FormData>;
  json(): Promise<unknown>;
  text(): Promise<string>;
}

export type RequestInfo = string | URL | Request;
export type RequestCache = 'default' | 'force-cache' | 'no-cache' | 'no-store' | 'only-if-cached' | 'reload';
export type RequestCredentials = 'omit' | 'include' | 'same-origin';
export type RequestDestination =
  | ''
  | 'audio'
  | 'audioworklet'
  | 'document'
  | 'embed'
  | 'font'
  | 'image'
  | 'manifest'
  | 'object'
  | 'paintworklet'
  | 'report'
  | 'script'
  | 'sharedworker'
  | 'style'
  | 'track'
  | 'video'
  | 'worker'
  | 'xslt';
export type ReferrerPolicy =
  | ''
  | 'no-referrer'
  | 'no-referrer-when-downgrade'
  | 'origin'
  | 'origin-when-cross-origin'
  | 'same-origin'
  | 'strict-origin'
  | 'strict-origin-when-cross-origin'
  | 'unsafe-url';
export type RequestMode = 'cors' | 'navigate' | 'no-cors' | 'same-origin';
export type RequestRedirect = 'error' | 'follow' | 'manual';
export type RequestDuplex = 'half';

export interface RequestInit {
  body?: BodyInit | null;
  cache?: RequestCache;
  credentials?: RequestCredentials;
  /** The dispatcher to send through (ferro's own option, as undici's). */
  dispatcher?: Dispatcher;
  duplex?: RequestDuplex;
  headers?: HeadersInit;
  integrity?: string;
  keepalive?: boolean;
  method?: string;
  mode?: RequestMode;
  redirect?: RequestRedirect;
  referrer?: string;
  referrerPolicy?: ReferrerPolicy;
  signal?: AbortSignal | null;
  window?: null;
}

export interface Request extends BodyMixin {
  readonly cache: RequestCache;
  readonly credentials: RequestCredentials;
  readonly destination: RequestDestination;
  readonly headers: Headers;
  readonly integrity: string;
  readonly method: string;
  readonly mode: RequestMode;
  readonly redirect: RequestRedirect;
  readonly referrer: string;
  readonly referrerPolicy: ReferrerPolicy;
  readonly url: string;
  readonly keepalive: boolean;
  readonly signal: AbortSignal;
  readonly duplex: RequestDuplex;
  clone(): Request;
}

export interface RequestConstructor {
  new (input: RequestInfo, init?: RequestInit): Request;
  readonly prototype: Request;
}

export interface ResponseInit {
  readonly status?: number;
  readonly statusText?: string;
  readonly headers?: HeadersInit;
}

export type ResponseType = 'basic' | 'cors' | 'default' | 'error' | 'opaque' | 'opaqueredirect';
export type ResponseRedirectStatus = 301 | 302 | 303 | 307 | 308;

export interface Response extends BodyMixin {
  readonly headers: Headers;
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly type: ResponseType;
  readonly url: string;
  readonly redirected: boolean;
  clone(): Response;
}

export interface ResponseConstructor {
  new (body?: BodyInit, init?: ResponseInit): Response;
  readonly prototype: Response;
  error(): Response;
  json(data: unknown, init?: ResponseInit): Response;
  redirect(url: string | URL, status?: ResponseRedirectStatus): Response;
}

export type { File };
