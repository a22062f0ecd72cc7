// A handler that hands every callback on unchanged; the cache's handlers override what they need.
// (Written against the DispatchHandler interface directly; the same role as a decorator handler.)
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../dispatcher/types.js';

export class PassThroughHandler implements DispatchHandler {
  protected readonly handler: DispatchHandler;

  constructor(handler: DispatchHandler) {
    this.handler = handler;
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
