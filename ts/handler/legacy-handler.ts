// Adapts a legacy (Dispatcher 1) handler — onConnect / onHeaders / onData / onComplete / onError /
// onUpgrade — to the controller-based interface, so every dispatcher accepts both kinds.
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { RequestAbortedError } from '../core/errors.js';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';

/** Has none of the controller-based response callbacks but some legacy one. */
export function isLegacyHandler(handler: DispatchHandler): boolean {
  return (
    typeof handler.onRequestStart !== 'function' &&
    typeof handler.onResponseStart !== 'function' &&
    (typeof handler.onHeaders === 'function' ||
      typeof handler.onConnect === 'function' ||
      typeof handler.onData === 'function' ||
      typeof handler.onComplete === 'function' ||
      typeof handler.onError === 'function' ||
      typeof handler.onUpgrade === 'function')
  );
}

/**
 * The handler a dispatcher should drive: `handler` itself when it is controller-based, else a
 * LegacyHandlerAdapter around it. Cheap for the common case: the first test short-circuits.
 */
export function toControllerHandler(handler: DispatchHandler): DispatchHandler {
  return isLegacyHandler(handler) ? new LegacyHandlerAdapter(handler) : handler;
}

/**
 * Header maps back to the flat [name, value, ...] Buffer list legacy consumers expect. Built from
 * the map the handler was given rather than `controller.rawHeaders`: an interceptor that rewrites
 * headers (decompress drops content-encoding, ...) changes the map, not the controller's raw list.
 */
export function toRawHeaders(headers: IncomingHeaders | IncomingHttpHeaders | null | undefined): Buffer[] {
  const raw: Buffer[] = [];
  if (headers == null) return raw;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const v of value) raw.push(Buffer.from(name, 'latin1'), Buffer.from(String(v), 'latin1'));
    } else {
      raw.push(Buffer.from(name, 'latin1'), Buffer.from(String(value), 'latin1'));
    }
  }
  return raw;
}

class LegacyHandlerAdapter implements DispatchHandler {
  readonly #handler: DispatchHandler;
  #controller: DispatchController | null = null;

  constructor(handler: DispatchHandler) {
    this.#handler = handler;
  }

  // Handed to onConnect and onHeaders; arrow properties so the legacy code can call them detached.
  readonly #abort = (reason?: Error): void => {
    this.#controller?.abort(reason ?? new RequestAbortedError());
  };
  readonly #resume = (): void => {
    this.#controller?.resume();
  };

  onRequestStart(controller: DispatchController, context: object): void {
    this.#controller = controller;
    this.#handler.onConnect?.(this.#abort, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#controller = controller;
    this.#handler.onUpgrade?.(statusCode, toRawHeaders(headers), socket);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#controller = controller;
    const onHeaders = this.#handler.onHeaders;
    if (onHeaders === undefined) return;
    if (onHeaders.call(this.#handler, statusCode, toRawHeaders(headers), this.#resume, statusMessage ?? '') === false) {
      controller.pause();
    }
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    const onData = this.#handler.onData;
    if (onData !== undefined && onData.call(this.#handler, chunk) === false) controller.pause();
  }

  onResponseEnd(_controller: DispatchController, trailers: IncomingHeaders): void {
    this.#handler.onComplete?.(toRawHeaders(trailers));
  }

  onResponseError(_controller: DispatchController, error: Error): void {
    this.#handler.onError?.(error);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }
}
