// What the proxy agents share: a dispatcher that picks one of its inner dispatchers per request and
// owns them, so close / destroy reach every one. A failure to route a request (bad origin, a
// forbidden header) goes to the request's handler, as for any dispatcher.
import { InvalidArgumentError } from '../core/errors.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { DispatcherBase } from '../dispatcher/dispatcher-base.js';
import { failUnstarted } from '../handler/detached-controller.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';

export abstract class RoutingDispatcher extends DispatcherBase {
  /** The inner dispatchers that exist now (each listed once). */
  protected abstract parts(): Iterable<Dispatcher>;

  /** Sends the request on to an inner dispatcher; `origin` is the request's, parsed. */
  protected abstract route(origin: URL, opts: DispatchOptions, handler: DispatchHandler): boolean;

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    try {
      const refused = this.refusal(opts);
      if (refused !== null) throw refused;
      let origin: URL;
      try {
        origin = new URL(String(opts.origin));
      } catch {
        throw new InvalidArgumentError('opts.origin must be a valid URL.');
      }
      return this.route(origin, opts, handler);
    } catch (err) {
      return failUnstarted(handler, err as Error);
    }
  }

  protected onClose(): Promise<unknown> {
    return Promise.all([...new Set(this.parts())].map((d) => d.close()));
  }

  protected onDestroy(err: Error | null): Promise<unknown> {
    return Promise.all([...new Set(this.parts())].map((d) => d.destroy(err)));
  }
}
