// interceptors.retry(opts): retries failed requests (RetryHandler). A request's own
// `retryOptions` override these, field by field.
import type { DispatcherComposeInterceptor, DispatchHandler, DispatchOptions } from '../core/types.js';
import { RetryHandler } from '../handler/retry-handler.js';
import { validateRetryOptions, type RetryOptions } from '../handler/retry-options.js';
import { spread } from '../core/spread.js';

export type RetryInterceptorOpts = RetryOptions;

export function retry(opts: RetryInterceptorOpts = {}): DispatcherComposeInterceptor {
  const defaults = validateRetryOptions(opts);
  return (dispatch) =>
    function retryInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      const { retryOptions, ...rest } = options;
      const merged = retryOptions == null ? defaults : spread(defaults, validateRetryOptions(retryOptions));
      const retries = new RetryHandler(spread(rest, { retryOptions: merged }), { dispatch, handler });
      return dispatch(rest, retries);
    };
}
