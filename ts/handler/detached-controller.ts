// For errors raised before a request reached anything that could control it: the handler still
// hears them through onResponseError, with a controller whose operations do nothing.
import type { DispatchController } from '../core/types.js';

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
