// What the proxy agents share: a dispatcher that picks one of its inner dispatchers per request and
// owns them, so close / destroy reach every one. A failure to route a request (bad origin, a
// forbidden header) goes to the request's handler, as for any dispatcher.
import { ClientClosedError, ClientDestroyedError, InvalidArgumentError } from '../core/errors.js';
import { Dispatcher } from '../dispatcher/dispatcher.js';
import { answer, destroyArgs } from '../dispatcher/lifecycle.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { detachedController } from '../handler/detached-controller.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';

export abstract class RoutingDispatcher extends Dispatcher {
  #closed = false;
  #destroyed = false;

  /** The inner dispatchers that exist now (each listed once). */
  protected abstract parts(): Iterable<Dispatcher>;

  /** Sends the request on to an inner dispatcher; `origin` is the request's, parsed. */
  protected abstract route(origin: URL, opts: DispatchOptions, handler: DispatchHandler): boolean;

  get closed(): boolean {
    return this.#closed;
  }
  get destroyed(): boolean {
    return this.#destroyed;
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (handler === null || typeof handler !== 'object') throw new InvalidArgumentError('handler must be an object');
    try {
      if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object.');
      if (this.#destroyed) throw new ClientDestroyedError();
      if (this.#closed) throw new ClientClosedError();
      let origin: URL;
      try {
        origin = new URL(String(opts.origin));
      } catch {
        throw new InvalidArgumentError('opts.origin must be a valid URL.');
      }
      return this.route(origin, opts, handler);
    } catch (err) {
      toControllerHandler(handler).onResponseError?.(detachedController, err as Error);
      return false;
    }
  }

  close(): Promise<void>;
  close(callback: (err: Error | null, data: null) => void): void;
  close(callback?: (err: Error | null, data: null) => void): Promise<void> | void {
    this.#closed = true;
    return answer(Promise.all([...new Set(this.parts())].map((d) => d.close())), callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: (err: Error | null, data: null) => void): void;
  destroy(err: Error | null, callback: (err: Error | null, data: null) => void): void;
  destroy(a?: unknown, b?: unknown): Promise<void> | void {
    const [err, callback] = destroyArgs(a, b);
    this.#closed = true;
    this.#destroyed = true;
    return answer(Promise.all([...new Set(this.parts())].map((d) => d.destroy(err))), callback);
  }
}
