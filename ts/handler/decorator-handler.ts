// DecoratorHandler (undici's name): a handler that forwards every callback to the handler it
// wraps. Interceptors extend it and override only the callbacks they change. A legacy
// (onConnect / onHeaders / ...) handler is adapted first, so it works behind any interceptor.
import { assertHandlerObject } from '../core/request.js';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';
import { toControllerHandler } from './legacy-handler.js';

export class DecoratorHandler implements DispatchHandler {
  /** The wrapped handler, controller-based. */
  protected readonly handler: DispatchHandler;

  constructor(handler: DispatchHandler) {
    assertHandlerObject(handler);
    this.handler = toControllerHandler(handler);
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.handler.onBodySent?.(chunk);
  }
}
