// Node's own WHATWG classes (Request, Response, Headers, FormData), exported by name without
// touching them at import. The first read of any of them loads Node's bundled fetch
// implementation, ~2 MB of heap and ~11 MB of RSS that a program which never uses fetch should
// not carry (and which raises the heap V8 lets grow before it collects). Each export is a Proxy
// that looks the class up on first use and forwards everything to it: `new`, statics, `prototype`
// (so `instanceof` and `extends` see Node's class), name and length.

import type * as T from './fetch-types.js';

type WhatwgName = 'Request' | 'Response' | 'Headers' | 'FormData';
type AnyConstructor = new (...args: unknown[]) => object;

function lazyClass<C>(name: WhatwgName): C {
  let real: AnyConstructor | undefined;
  const resolve = (): AnyConstructor => (real ??= globalThis[name] as unknown as AnyConstructor);
  // A bound function is a constructor with no `prototype` of its own, so the Proxy's answers are
  // not held to a stand-in's: nothing is read from this target.
  const target = function () {}.bind(null) as unknown as AnyConstructor;
  const proxy: AnyConstructor = new Proxy(target, {
    construct: (_t, args, newTarget) => Reflect.construct(resolve(), args, newTarget === proxy ? resolve() : newTarget) as object,
    apply: (_t, thisArg, args) => Reflect.apply(resolve(), thisArg, args) as unknown,
    get: (_t, key) => Reflect.get(resolve(), key) as unknown,
    set: (_t, key, value) => Reflect.set(resolve(), key, value),
    has: (_t, key) => Reflect.has(resolve(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(resolve()),
    ownKeys: () => Reflect.ownKeys(resolve()),
    getOwnPropertyDescriptor: (_t, key) => Reflect.getOwnPropertyDescriptor(resolve(), key),
    defineProperty: (_t, key, desc) => Reflect.defineProperty(resolve(), key, desc),
    deleteProperty: (_t, key) => Reflect.deleteProperty(resolve(), key),
  });
  return proxy as unknown as C;
}

// Typed with ferro's own declarations (fetch-types.ts), not the DOM lib's.
export const Request = lazyClass<T.RequestConstructor>('Request');
export type Request = T.Request;
export const Response = lazyClass<T.ResponseConstructor>('Response');
export type Response = T.Response;
export const Headers = lazyClass<T.HeadersConstructor>('Headers');
export type Headers = T.Headers;
export const FormData = lazyClass<T.FormDataConstructor>('FormData');
export type FormData = T.FormData;
