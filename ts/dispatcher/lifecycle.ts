// close() and destroy() share their call forms across every dispatcher: a promise when no
// callback is given, otherwise `callback(null, null)`; destroy takes an optional error first.
export type LifecycleCallback = (err: Error | null, data: null) => void;

/** destroy()'s four call forms → the error (or null) and the callback (or undefined). */
export function destroyArgs(a: unknown, b: unknown): [Error | null, LifecycleCallback | undefined] {
  const callback = (typeof a === 'function' ? a : b) as LifecycleCallback | undefined;
  return [a instanceof Error ? a : null, callback];
}

/** Answers a close/destroy in the form it was called in. */
export function answer(done: Promise<unknown>, callback: LifecycleCallback | undefined): Promise<void> | void {
  const settled = done.then(() => undefined);
  if (callback === undefined) return settled;
  settled.then(() => callback(null, null));
}

/** Refuses a close/destroy (e.g. close() on a destroyed dispatcher) in the form it was called in. */
export function refuse(err: Error, callback: LifecycleCallback | undefined): Promise<void> | void {
  if (callback === undefined) return Promise.reject(err);
  queueMicrotask(() => callback(err, null));
}
