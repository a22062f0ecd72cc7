// What the stream() and pipeline() handlers share: option checks, the abort-signal wiring, the
// controller hand-off and 1xx delivery to onInfo (response-head.ts).
import type { EventEmitter } from 'node:events';
import { InvalidArgumentError } from '../core/errors.js';
import type {
  AbortSignalLike,
  DispatchController,
  IncomingHeaders,
  RequestOptions,
} from '../core/types.js';
import { abortReason, destroyRequestBody, isEventTarget } from './request.js';
import { deliverInfo, type InfoCallback } from './response-head.js';

/** Throws InvalidArgumentError for what request(), stream() and pipeline() all refuse. */
export function checkApiOptions(opts: RequestOptions<unknown>): void {
  const { signal, method, onInfo } = opts;
  if (
    signal != null &&
    typeof (signal as EventEmitter).on !== 'function' &&
    typeof (signal as AbortSignal).addEventListener !== 'function'
  ) {
    throw new InvalidArgumentError('signal must be an EventEmitter or EventTarget');
  }
  if (method === 'CONNECT') throw new InvalidArgumentError('invalid method');
  if (onInfo != null && typeof onInfo !== 'function') throw new InvalidArgumentError('invalid onInfo callback');
}

export abstract class ApiHandler {
  readonly opaque: unknown;
  readonly onInfo: InfoCallback | null;
  readonly requestBody: unknown;
  readonly responseHeaders: unknown;
  controller: DispatchController | null = null;
  context: object | null = null;
  /** An abort that arrived before the request started; applied in onRequestStart. */
  reason: Error | null = null;
  /** The dispatcher has reported the final outcome (end or error). */
  done = false;
  #signal: AbortSignalLike | null = null;
  #emitterListener: (() => void) | null = null;

  /** Validates `opts` (destroying a stream body it refuses) and subscribes to its signal. */
  constructor(opts: RequestOptions<unknown>) {
    checkApiOptions(opts);
    this.opaque = opts.opaque ?? null;
    this.onInfo = opts.onInfo ?? null;
    this.requestBody = opts.body;
    this.responseHeaders = opts.responseHeaders;
    const signal = opts.signal;
    if (signal == null) return;
    if ((signal as AbortSignal).aborted === true) {
      this.reason = abortReason(signal);
    } else if (isEventTarget(signal)) {
      this.#signal = signal;
      signal.addEventListener('abort', this, { once: true });
    } else {
      this.#signal = signal;
      this.#emitterListener = () => this.handleEvent();
      (signal as EventEmitter).once('abort', this.#emitterListener);
    }
  }

  /** What the operation does when its signal fires. */
  protected abstract onAbortSignal(reason: Error): void;

  onRequestStart(controller: DispatchController, context: object): void {
    this.controller = controller;
    this.context = context;
    if (this.reason !== null) controller.abort(this.reason);
  }

  /** Aborts the request in flight, or the one about to start. */
  abortRequest(reason: Error): void {
    if (this.done) return;
    const controller = this.controller;
    if (controller !== null) controller.abort(reason);
    else this.reason ??= reason;
  }

  /** Delivers a 1xx response to onInfo; false for a final response. */
  informational(controller: DispatchController, statusCode: number, headers: IncomingHeaders): boolean {
    return deliverInfo(this.onInfo, this.responseHeaders, controller, statusCode, headers);
  }

  /** The AbortSignal listener. */
  handleEvent(): void {
    const signal = this.#signal;
    if (signal === null) return;
    this.removeSignal();
    this.onAbortSignal(abortReason(signal));
  }

  /** Marks the request settled: the signal no longer matters and a stream body is released. */
  settle(err: Error | null): void {
    this.done = true;
    this.removeSignal();
    if (err !== null) destroyRequestBody(this.requestBody, err);
  }

  removeSignal(): void {
    const signal = this.#signal;
    if (signal === null) return;
    this.#signal = null;
    if (isEventTarget(signal)) {
      signal.removeEventListener('abort', this);
    } else if (this.#emitterListener !== null) {
      (signal as EventEmitter).removeListener('abort', this.#emitterListener);
      this.#emitterListener = null;
    }
  }
}
