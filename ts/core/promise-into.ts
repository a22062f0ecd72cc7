// A new promise whose resolve and reject functions are stored on an object the caller already has
// (a request's handler, a body's consumer): no executor closure per promise, on paths that make
// one per request. (Promise.withResolvers would allocate a result object instead, and Node 20
// lacks it.)

/** Where promiseInto puts the functions (a reject typed for any reason the caller passes). */
interface Settlers<T> {
  resolve: ((value: T) => void) | null;
  reject: ((reason: never) => void) | null;
}

let capturedResolve: ((value: never) => void) | null = null;
let capturedReject: ((reason: Error) => void) | null = null;

// One executor for every promise: V8 runs it synchronously inside the constructor.
function capture(resolve: (value: never) => void, reject: (reason: Error) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** A pending promise; `target.resolve` / `target.reject` settle it. */
export function promiseInto<T>(target: Settlers<T>): Promise<T> {
  const promise = new Promise<T>(capture);
  target.resolve = capturedResolve as (value: T) => void;
  target.reject = capturedReject;
  capturedResolve = capturedReject = null;
  return promise;
}
