// The retry policy: RetryHandler's options, their defaults (undici's), their validation, and the
// default decision function (which errors and statuses are retried, and how long to wait).
import { InvalidArgumentError } from '../core/errors.js';
import type { IncomingHeaders, OnRetryCallback, ResolvedRetryOptions, RetryContext, RetryOptions } from '../core/types.js';

// The policy's types are public ones (core/types.ts); exported here too, beside the policy.
export type { OnRetryCallback, ResolvedRetryOptions, RetryCallback, RetryContext, RetryOptions, RetryState } from '../core/types.js';


const DEFAULT_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY'];
const DEFAULT_STATUS_CODES = [500, 502, 503, 504, 429];
const DEFAULT_ERROR_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  // ferro reports a connection closed short of Content-Length as this (undici, on a keep-alive
  // connection, as UND_ERR_SOCKET): the cut body a retry resumes.
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
];

function checkNumber(value: unknown, name: string, integer: boolean, min: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new InvalidArgumentError(`retry: ${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}`);
  }
}

function checkList(value: unknown, name: string, item: 'string' | 'number'): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((v) => typeof v !== item)) {
    throw new InvalidArgumentError(`retry: ${name} must be an array of ${item}s`);
  }
}

function checkBoolean(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw new InvalidArgumentError(`retry: ${name} must be a boolean`);
}

/** Throws InvalidArgumentError for any option of the wrong type or range. */
export function validateRetryOptions(opts: unknown): RetryOptions {
  if (opts == null) return {};
  if (typeof opts !== 'object') throw new InvalidArgumentError('retry: options must be an object');
  const o = opts as Record<string, unknown>;
  if (o.retry !== undefined && typeof o.retry !== 'function') throw new InvalidArgumentError('retry: retry must be a function');
  checkNumber(o.maxRetries, 'maxRetries', true, 0);
  checkNumber(o.minTimeout, 'minTimeout', false, 0);
  checkNumber(o.maxTimeout, 'maxTimeout', false, 0);
  checkNumber(o.timeoutFactor, 'timeoutFactor', false, 1);
  checkBoolean(o.retryAfter, 'retryAfter');
  checkBoolean(o.throwOnError, 'throwOnError');
  checkList(o.methods, 'methods', 'string');
  checkList(o.statusCodes, 'statusCodes', 'number');
  checkList(o.errorCodes, 'errorCodes', 'string');
  return o as RetryOptions;
}

export function resolveRetryOptions(opts: RetryOptions): ResolvedRetryOptions {
  return {
    retry: opts.retry ?? defaultRetry,
    maxRetries: opts.maxRetries ?? 5,
    minTimeout: opts.minTimeout ?? 500,
    maxTimeout: opts.maxTimeout ?? 30_000,
    timeoutFactor: opts.timeoutFactor ?? 2,
    retryAfter: opts.retryAfter ?? true,
    methods: opts.methods ?? DEFAULT_METHODS,
    statusCodes: opts.statusCodes ?? DEFAULT_STATUS_CODES,
    errorCodes: opts.errorCodes ?? DEFAULT_ERROR_CODES,
    throwOnError: opts.throwOnError ?? true,
  };
}

/** Retry-After as milliseconds from now: delay-seconds or an HTTP date; null when unusable. */
function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The wait before retry number `counter`: Retry-After when given, else exponential backoff. */
function retryDelay(counter: number, o: ResolvedRetryOptions, headers: IncomingHeaders | null | undefined): number {
  const after = o.retryAfter ? retryAfterMs(headers?.['retry-after']) : null;
  if (after !== null) return Math.min(after, o.maxTimeout);
  return Math.min(o.minTimeout * o.timeoutFactor ** (counter - 1), o.maxTimeout);
}

/** undici's policy: listed codes, methods and statuses only, up to maxRetries, then give up. */
function defaultRetry(err: Error, { state, opts }: RetryContext, callback: OnRetryCallback): ReturnType<typeof setTimeout> | undefined {
  // RetryHandler passes the options resolved; a policy calling this one may pass its own.
  const o = resolveRetryOptions(opts.retryOptions ?? {});
  const { code, statusCode, headers } = err as Error & { code?: string; statusCode?: number; headers?: IncomingHeaders };
  // Errors without a code (thrown by user code upstream, say) are left to the other rules.
  if (code && code !== 'UND_ERR_REQ_RETRY' && !o.errorCodes.includes(code)) return void callback(err);
  if (!o.methods.includes(String(opts.method).toUpperCase())) return void callback(err);
  if (statusCode != null && !o.statusCodes.includes(statusCode)) return void callback(err);
  if (state.counter > o.maxRetries) return void callback(err);
  return setTimeout(() => callback(null), retryDelay(state.counter, o, headers));
}
