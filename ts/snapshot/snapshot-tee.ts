// Recording a live response: a handler wrapper that copies status, headers, every body byte and the
// trailers aside while passing each callback, with the real controller, to the caller's handler
// unchanged. Only a response that ends normally is handed to `onRecorded`; an error or an abort
// records nothing.
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { DispatchController, DispatchHandler, IncomingHeaders } from '../core/types.js';

export interface CapturedResponse {
  statusCode: number;
  headers: IncomingHeaders;
  body: Buffer;
  trailers: IncomingHeaders;
}

export class RecordingHandler implements DispatchHandler {
  readonly #inner: DispatchHandler;
  readonly #onRecorded: (response: CapturedResponse) => void;
  #statusCode = 0;
  #headers: IncomingHeaders = {};
  #chunks: Buffer[] = [];

  constructor(inner: DispatchHandler, onRecorded: (response: CapturedResponse) => void) {
    this.#inner = inner;
    this.#onRecorded = onRecorded;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(
    controller: DispatchController,
    statusCode: number,
    headers: IncomingHeaders,
    statusMessage?: string,
  ): void {
    // A final response after an informational one starts the capture afresh.
    this.#statusCode = statusCode;
    this.#headers = { ...headers };
    this.#chunks = [];
    this.#inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    // A copy: the caller's handler may reuse or modify the chunk it is given.
    this.#chunks.push(Buffer.from(chunk));
    this.#inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    if (!controller.aborted) {
      this.#onRecorded({
        statusCode: this.#statusCode,
        headers: this.#headers,
        body: Buffer.concat(this.#chunks),
        trailers: { ...trailers },
      });
    }
    this.#chunks = [];
    this.#inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: DispatchController, error: Error): void {
    this.#chunks = [];
    this.#inner.onResponseError?.(controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.#inner.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.#inner.onRequestSent?.();
  }

  onResponseStarted(): void {
    this.#inner.onResponseStarted?.();
  }
}
