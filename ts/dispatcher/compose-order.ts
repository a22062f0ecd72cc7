// Interceptors whose relative order in compose() matters. The cache guards redirect chains (a
// credentialed or cross-origin chain is not filed under the URL asked for; validators stay on
// their origin) only when it sits outside the redirect interceptor and so sees the chain; the
// other order is refused, with undici's error. Anything untagged (deduplicate, ...) goes anywhere.
import { InvalidArgumentError } from '../core/errors.js';

export type InterceptorKind = 'cache' | 'redirect';

const kinds = new WeakMap<object, InterceptorKind>();

/** Tags an interceptor with its kind for the order check; returns it. */
export function markInterceptor<T extends object>(interceptor: T, kind: InterceptorKind): T {
  kinds.set(interceptor, kind);
  return interceptor;
}

/** Throws when `list` (in compose's argument order) puts the cache before the redirect. */
export function checkComposeOrder(list: readonly unknown[]): void {
  let cacheAt = -1;
  let redirectAt = -1;
  list.forEach((interceptor, i) => {
    const kind = typeof interceptor === 'function' ? kinds.get(interceptor) : undefined;
    if (kind === 'cache' && cacheAt === -1) cacheAt = i;
    else if (kind === 'redirect' && redirectAt === -1) redirectAt = i;
  });
  if (cacheAt !== -1 && redirectAt !== -1 && cacheAt < redirectAt) {
    throw new InvalidArgumentError(
      "the cache interceptor must be composed after the redirect interceptor; composing the cache before the redirect disables the cache's cross-origin and credential redirect guards (GHSA-75VM-9G8F-99J4, GHSA-MQG3-3V4R-CM32, GHSA-4W7W-5XRC-9H26, GHSA-7XG3-FPHP-28HG)",
    );
  }
}
