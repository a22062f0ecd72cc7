// For errors raised before a request reached anything that could control it: the handler still
// hears them through onResponseError, with a controller whose operations do nothing.
import type { DispatchController, DispatchHandler } from '../core/types.js';
import { toControllerHandler } from './legacy-handler.js';

export const detachedController: DispatchController = Object.freeze({
  aborted: false,
  paused: false,
  reason: null,
  rawHeaders: null,
  rawTrailers: null,
  abort() {},
  pause() {},
  resume() {},
});

/** Fails a request no dispatcher started: its handler (legacy or not) hears `err` through onResponseError. */
export function failUnstarted(handler: DispatchHandler, err: Error): false {
  toControllerHandler(handler).onResponseError?.(detachedController, err);
  return false;
}
