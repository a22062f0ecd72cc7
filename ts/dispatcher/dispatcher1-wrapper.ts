// Dispatcher1Wrapper: exposes a controller-based dispatcher to consumers of the legacy handler
// interface (Node's bundled fetch among them), translating their callbacks per request.
import { InvalidArgumentError } from '../core/errors.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { Dispatcher } from './dispatcher.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';

export class Dispatcher1Wrapper extends Dispatcher {
  readonly #dispatcher: Dispatcher;

  constructor(dispatcher: Dispatcher) {
    super();
    if (dispatcher === null || typeof dispatcher !== 'object' || typeof dispatcher.dispatch !== 'function') {
      throw new InvalidArgumentError('Dispatcher1Wrapper expects a dispatcher');
    }
    this.#dispatcher = dispatcher;
  }

  /** Accepts legacy and controller-based handlers alike; the wrapped dispatcher sees the latter. */
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean {
    if (handler === null || typeof handler !== 'object') throw new InvalidArgumentError('handler must be an object');
    return this.#dispatcher.dispatch(options, toControllerHandler(handler));
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    return (this.#dispatcher.close as (cb?: () => void) => Promise<void> | void).call(this.#dispatcher, callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(...args: unknown[]): Promise<void> | void {
    return (this.#dispatcher.destroy as (...a: unknown[]) => Promise<void> | void).apply(this.#dispatcher, args);
  }
}
