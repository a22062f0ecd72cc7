// pipeline(): the request as one stream.Duplex — what is written to it becomes the request body,
// and what it reads is the stream the caller's handler builds from the response.
import { AsyncResource } from 'node:async_hooks';
import { Duplex, PassThrough, Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidArgumentError, InvalidReturnValueError, RequestAbortedError } from '../core/errors.js';
import type {
  DispatchController,
  DispatchHandler,
  IncomingHeaders,
  PipelineHandler,
  PipelineOptions,
} from '../core/types.js';
import { ApiHandler, checkApiOptions, destroyRequestBody } from './api-handler.js';
import { responseHeaders } from './response-head.js';
import type { RequestDispatcher } from './request.js';
import { spread } from '../core/spread.js';

function noop(): void {}

/** undici asks only for `.on` of what the handler returns; pause / resume are used when present. */
function isReadable(value: unknown): value is Readable {
  return value !== null && typeof value === 'object' && typeof (value as Readable).on === 'function';
}

/**
 * Calls `done` once when `out` ends or errors; a close before either is an abort
 * (RequestAbortedError, as undici: not the premature-close error node's finished() reports).
 */
function whenDone(out: Pick<Readable, 'on'>, done: (err: Error | null) => void): void {
  let called = false;
  const once = (err: Error | null): void => {
    if (called) return;
    called = true;
    done(err);
  };
  out.on('end', () => once(null));
  out.on('error', (err: Error) => once(err));
  out.on('close', () => once(new RequestAbortedError()));
}

function destroyStream(stream: Readable | null, err: Error | null): void {
  if (stream === null || stream.destroyed || typeof stream.destroy !== 'function') return;
  stream.on('error', noop);
  stream.destroy(err ?? undefined);
}

class PipelineDispatchHandler extends ApiHandler implements DispatchHandler {
  readonly handler: PipelineHandler<unknown>;
  readonly asyncResource = new AsyncResource('LIB_PIPELINE');
  /** The request body: fed by writes to `ret`. */
  readonly req: Readable;
  /** What the caller gets. */
  readonly ret: Duplex;
  /** The response body handed to the handler. */
  res: Readable | null = null;
  /** The stream the handler returned; `ret` reads from it. */
  out: Readable | null = null;
  /** The response ended: nothing written from now on is sent. */
  completed = false;
  /** A write to `ret` waiting for the request body to be read. */
  #pendingWrite: ((err?: Error | null) => void) | null = null;

  constructor(opts: PipelineOptions<unknown>, handler: PipelineHandler<unknown>) {
    checkApiOptions(opts);
    super(opts);
    this.handler = handler;
    this.req = new Readable({
      read: () => {
        const callback = this.#pendingWrite;
        this.#pendingWrite = null;
        callback?.();
      },
    }).on('error', noop);
    this.ret = new Duplex({
      readableObjectMode: opts.objectMode === true,
      autoDestroy: true,
      read: () => {
        this.out?.resume?.();
      },
      write: (chunk: Buffer, encoding: BufferEncoding, callback: (err?: Error | null) => void) => {
        // Once the response is complete the request body has no reader: writes are discarded.
        if (this.completed) callback();
        else if (this.req.destroyed) callback(this.reason ?? new RequestAbortedError());
        else if (this.req.push(chunk, encoding)) callback();
        else this.#pendingWrite = callback;
      },
      final: (callback: (err?: Error | null) => void) => {
        this.req.push(null);
        callback();
      },
      destroy: (err: Error | null, callback: (err: Error | null) => void) => {
        this.#teardown(err, callback);
      },
    });
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders): void {
    if (this.done || this.res !== null) return;
    if (this.informational(controller, statusCode, headers)) return;
    const res = new Readable({
      read: () => {
        this.controller?.resume();
      },
      destroy: (err: Error | null, callback: (err: Error | null) => void) => {
        // The handler dropped the response body before its end: the request is of no further use,
        // and the body reports it as an abort (undici) rather than closing quietly.
        if (err === null && !res.readableEnded) err = new RequestAbortedError();
        // After the current event: when the returned stream is going down in the same turn (a
        // node pipeline() destroying this body because its destination closed), its own outcome
        // is what the Duplex reports.
        const reason = err ?? new RequestAbortedError();
        queueMicrotask(() => this.abortRequest(reason));
        callback(err);
      },
    });
    this.res = res;
    let out: unknown;
    try {
      out = this.asyncResource.runInAsyncScope(this.handler, null, {
        statusCode,
        headers: responseHeaders(this.responseHeaders, controller, headers) as IncomingHttpHeaders,
        opaque: this.opaque,
        body: res,
        context: this.context as object,
        onInfo: this.onInfo,
        timings: controller.timings,
      });
    } catch (err) {
      res.on('error', noop);
      controller.abort(err as Error);
      return;
    }
    if (!isReadable(out)) {
      controller.abort(new InvalidReturnValueError('expected Readable'));
      return;
    }
    this.out = out;
    const ret = this.ret;
    out.on('data', (chunk: unknown) => {
      if (!ret.push(chunk)) out.pause?.();
    });
    whenDone(out, (err) => {
      if (err) ret.destroy(err);
      else if (!ret.destroyed) ret.push(null);
    });
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    const res = this.res;
    if (res !== null && !this.done && !res.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.completed = true;
    this.settle(null);
    this.res?.push(null);
    // A write waiting for the request body to be read is discarded too.
    const pending = this.#pendingWrite;
    this.#pendingWrite = null;
    pending?.();
  }

  onResponseError(_controller: DispatchController | null, err: Error): void {
    this.fail(err);
  }

  protected onAbortSignal(reason: Error): void {
    this.ret.destroy(reason);
  }

  /** Final failure, from the dispatcher or from dispatch() throwing: both sides go down. */
  fail(err: Error): void {
    if (this.done) return;
    this.settle(err);
    this.ret.destroy(err);
  }

  /** The Duplex is being destroyed: abort the request if it is still running, release every stream. */
  #teardown(err: Error | null, callback: (err: Error | null) => void): void {
    const ret = this.ret;
    if (err === null && !ret.readableEnded) err = new RequestAbortedError();
    if (!this.done) this.abortRequest(err ?? new RequestAbortedError());
    this.removeSignal();
    const pending = this.#pendingWrite;
    this.#pendingWrite = null;
    pending?.(err);
    destroyStream(this.req, err);
    destroyStream(this.res, err);
    destroyStream(this.out, err);
    callback(err);
  }
}

/**
 * Performs a request through `this` dispatcher as a Duplex: written data is the request body,
 * read data is what `handler` returns from the response.
 */
export function pipeline<TOpaque = null>(
  this: RequestDispatcher,
  opts: PipelineOptions<TOpaque>,
  handler: PipelineHandler<TOpaque>,
): Duplex {
  let state: PipelineDispatchHandler;
  try {
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
    if (typeof handler !== 'function') throw new InvalidArgumentError('invalid handler');
    state = new PipelineDispatchHandler(opts as PipelineOptions<unknown>, handler as PipelineHandler<unknown>);
  } catch (err) {
    destroyRequestBody((opts as PipelineOptions<unknown> | null)?.body, err as Error);
    // The error surfaces as the returned stream's 'error', like every later failure.
    return new PassThrough().destroy(err as Error);
  }
  try {
    this.dispatch(spread(opts, { body: state.req }), state);
  } catch (err) {
    state.fail(err as Error);
  }
  return state.ret;
}
