// interceptors.redirect(opts): follows redirects (RedirectHandler). Each option can also be set
// per request; `maxRedirections` left unset or 0 turns following off for that request.
import { InvalidArgumentError } from '../core/errors.js';
import type { DispatcherComposeInterceptor, DispatchHandler, DispatchOptions } from '../core/types.js';
import { RedirectHandler, validateRedirectOptions, type RedirectOptions } from '../handler/redirect-handler.js';
import { spread } from '../core/spread.js';
import { markInterceptor } from '../dispatcher/compose-order.js';

export type RedirectInterceptorOpts = RedirectOptions;

export function redirect(opts: RedirectInterceptorOpts = {}): DispatcherComposeInterceptor {
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('redirect: options must be an object');
  validateRedirectOptions(opts);
  const defaults = opts;
  return markInterceptor<DispatcherComposeInterceptor>((dispatch) =>
    function redirectInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      const {
        maxRedirections = defaults.maxRedirections,
        throwOnMaxRedirect = defaults.throwOnMaxRedirect,
        stripHeadersOnRedirect = defaults.stripHeadersOnRedirect,
        stripHeadersOnCrossOriginRedirect = defaults.stripHeadersOnCrossOriginRedirect,
        ...rest
      } = options as DispatchOptions & RedirectOptions;
      // Below this interceptor nothing redirects again.
      if (!maxRedirections) return dispatch(rest, handler);
      const redirects = new RedirectHandler(
        dispatch,
        maxRedirections,
        spread(rest, { throwOnMaxRedirect, stripHeadersOnRedirect, stripHeadersOnCrossOriginRedirect }),
        handler,
      );
      return dispatch(redirects.opts, redirects);
    }, 'redirect');
}
