// Checks on what dispatch() receives — the handler and the request options — with undici's
// classes and messages, made before anything is queued or written.
import { InvalidArgumentError } from './errors.js';
import type { DispatchHandler, DispatchOptions } from './types.js';

function checkHook(handler: DispatchHandler, name: keyof DispatchHandler, required: boolean): void {
  const hook = handler[name];
  if (typeof hook === 'function' || (!required && hook === undefined)) return;
  throw new InvalidArgumentError(`invalid ${name} method`);
}

/** The hooks a controller-based handler must have for this request (undici's list). */
export function assertRequestHandler(handler: DispatchHandler, method: unknown, upgrade: unknown): void {
  if (handler === null || typeof handler !== 'object') throw new InvalidArgumentError('handler must be an object');
  checkHook(handler, 'onRequestStart', true);
  checkHook(handler, 'onResponseError', true);
  checkHook(handler, 'onBodySent', false);
  checkHook(handler, 'onRequestSent', false);
  if (upgrade || method === 'CONNECT') {
    checkHook(handler, 'onRequestUpgrade', true);
  } else {
    checkHook(handler, 'onResponseStart', true);
    checkHook(handler, 'onResponseData', true);
    checkHook(handler, 'onResponseEnd', true);
  }
}

function checkTimeout(value: unknown, name: string): void {
  if (value != null && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
    throw new InvalidArgumentError(`invalid ${name}`);
  }
}

/** Options every request must get right; the path, method and headers are checked as they are packed. */
export function checkRequestOptions(opts: DispatchOptions): void {
  if (opts.dispatcher != null) {
    throw new InvalidArgumentError(
      'opts.dispatcher is not supported by instance methods. Pass opts.dispatcher to the top-level functions or call the dispatcher instance method directly.',
    );
  }
  checkTimeout(opts.headersTimeout, 'headersTimeout');
  checkTimeout(opts.bodyTimeout, 'bodyTimeout');
  if (opts.reset != null && typeof opts.reset !== 'boolean') throw new InvalidArgumentError('invalid reset');
  if (opts.expectContinue != null && typeof opts.expectContinue !== 'boolean') {
    throw new InvalidArgumentError('invalid expectContinue');
  }
  if (opts.throwOnError != null) throw new InvalidArgumentError('invalid throwOnError');
  if (opts.maxRedirections != null && opts.maxRedirections !== 0) {
    throw new InvalidArgumentError('maxRedirections is not supported, use the redirect interceptor');
  }
  if (opts.query != null && typeof opts.path === 'string' && /[?#]/.test(opts.path)) {
    throw new InvalidArgumentError('Query params cannot be passed when url already contains "?" or "#".');
  }
}
