// interceptors.retry(opts): retries failed requests (RetryHandler). A request's own
// `retryOptions` override these, field by field.
import type { DispatcherComposeInterceptor, DispatchHandler, DispatchOptions } from '../core/types.js';
import { RetryHandler } from '../handler/retry-handler.js';
import { validateRetryOptions, type RetryOptions } from '../handler/retry-options.js';

export type RetryInterceptorOpts = RetryOptions;

export function retry(opts: RetryInterceptorOpts = {}): DispatcherComposeInterceptor {
  const defaults = validateRetryOptions(opts);
  return (dispatch) =>
    function retryInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      const { retryOptions, ...rest } = options;
      const retries = new RetryHandler({ ...rest, retryOptions: { ...defaults, ...validateRetryOptions(retryOptions) } }, { dispatch, handler });
      return dispatch(rest, retries);
    };
}
