// Dispatcher1Wrapper: exposes a controller-based dispatcher to consumers of the legacy handler
// interface (Node's bundled fetch among them), translating their callbacks per request.
import { assertHandlerObject } from '../core/request.js';
import { InvalidArgumentError } from '../core/errors.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { DelegatingDispatcher, type Dispatcher } from './dispatcher.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';

export class Dispatcher1Wrapper extends DelegatingDispatcher {
  constructor(dispatcher: Dispatcher) {
    if (dispatcher === null || typeof dispatcher !== 'object' || typeof dispatcher.dispatch !== 'function') {
      throw new InvalidArgumentError('Dispatcher1Wrapper expects a dispatcher');
    }
    super(dispatcher);
  }

  /** Accepts legacy and controller-based handlers alike; the wrapped dispatcher sees the latter. */
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean {
    assertHandlerObject(handler);
    return this.inner.dispatch(options, toControllerHandler(handler));
  }
}
