// RetryAgent (undici's name): a dispatcher that sends every request through a RetryHandler
// over another dispatcher; close and destroy go to that dispatcher.
import { InvalidArgumentError } from '../core/errors.js';
import { RetryHandler } from '../handler/retry-handler.js';
import { validateRetryOptions, type RetryOptions } from '../handler/retry-options.js';
import { Dispatcher } from './dispatcher.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';

export class RetryAgent extends Dispatcher {
  readonly #agent: Dispatcher;
  readonly #options: RetryOptions;

  constructor(agent: Dispatcher, options: RetryOptions = {}) {
    super();
    if (agent === null || typeof agent !== 'object' || typeof agent.dispatch !== 'function') {
      throw new InvalidArgumentError('RetryAgent: agent must be a dispatcher');
    }
    this.#agent = agent;
    this.#options = validateRetryOptions(options);
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    const agent = this.#agent;
    const retries = new RetryHandler({ ...opts, retryOptions: this.#options }, { dispatch: agent.dispatch.bind(agent), handler });
    return agent.dispatch(opts, retries);
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    return (this.#agent.close as (cb?: () => void) => Promise<void> | void).call(this.#agent, callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(...args: unknown[]): Promise<void> | void {
    return (this.#agent.destroy as (...a: unknown[]) => Promise<void> | void).apply(this.#agent, args);
  }
}
