// RetryAgent (undici's name): a dispatcher that sends every request through a RetryHandler
// over another dispatcher; close and destroy go to that dispatcher.
import { InvalidArgumentError } from '../core/errors.js';
import { RetryHandler } from '../handler/retry-handler.js';
import { validateRetryOptions, type RetryOptions } from '../handler/retry-options.js';
import { DelegatingDispatcher, type Dispatcher } from './dispatcher.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { spread } from '../core/spread.js';

export class RetryAgent extends DelegatingDispatcher {
  readonly #options: RetryOptions;

  constructor(agent: Dispatcher, options: RetryOptions = {}) {
    if (agent === null || typeof agent !== 'object' || typeof agent.dispatch !== 'function') {
      throw new InvalidArgumentError('RetryAgent: agent must be a dispatcher');
    }
    super(agent);
    this.#options = validateRetryOptions(options);
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    const agent = this.inner;
    const retries = new RetryHandler(spread(opts, { retryOptions: this.#options }), { dispatch: agent.dispatch.bind(agent), handler });
    return agent.dispatch(opts, retries);
  }
}
