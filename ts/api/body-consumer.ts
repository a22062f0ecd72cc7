// What a body's consumers (text(), json(), bytes(), arrayBuffer(), blob(), dump()) hold while the
// body is read, and how each one turns the collected chunks into its result.
import { Blob } from 'node:buffer';
import { RequestAbortedError } from '../core/errors.js';
import { promiseInto } from '../core/promise-into.js';
import { concatArrayBuffer, concatBytes, decodeText } from './body-bytes.js';

export type ConsumeKind = 'text' | 'json' | 'bytes' | 'arrayBuffer' | 'blob' | 'dump';

export interface Consumer {
  kind: ConsumeKind;
  /** null once settled (and always for 'dump'): later chunks are dropped. */
  chunks: Buffer[] | null;
  /** Bytes collected; for 'dump', the limit instead. */
  length: number;
  promise: Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** 'dump' only: the caller's signal and our listener on it. */
  signal: AbortSignal | null;
  onAbort: (() => void) | null;
}

function noop(): void {}

/** A placeholder for a consumer's promise while it is made. */
const settledPromise = Promise.resolve();

/**
 * Settles a consumer that has all of its chunks. `whole`: the body's single chunk as an
 * ArrayBuffer that may be handed out without a copy (bytes / arrayBuffer only), else null.
 */
export function settleConsumer(
  consumer: Consumer,
  encoding: BufferEncoding | null,
  contentType: string,
  whole: ArrayBuffer | null,
): void {
  const chunks = consumer.chunks!;
  const length = consumer.length;
  consumer.chunks = null;
  let value: unknown;
  try {
    switch (consumer.kind) {
      case 'text':
        value = decodeText(chunks, length, encoding);
        break;
      case 'json':
        value = JSON.parse(decodeText(chunks, length, encoding));
        break;
      case 'bytes':
        value = whole !== null ? new Uint8Array(whole) : concatBytes(chunks, length);
        break;
      case 'arrayBuffer':
        value = whole ?? concatArrayBuffer(chunks, length);
        break;
      case 'blob':
        value = new Blob(chunks, { type: contentType });
        break;
      case 'dump':
        return;
    }
  } catch (err) {
    consumer.reject(err);
    return;
  }
  consumer.resolve(value);
}

/** A consumer with its promise; the promise is the one the caller gets. */
export function newConsumer(kind: ConsumeKind, chunks: Buffer[] | null, length: number): Consumer {
  const consumer: Consumer = {
    kind,
    chunks,
    length,
    promise: settledPromise,
    resolve: noop,
    reject: noop,
    signal: null,
    onAbort: null,
  };
  consumer.promise = promiseInto(consumer);
  return consumer;
}

/** A dump settles when the body is torn down: at its end, past the limit, or on abort. */
export function settleDump(consumer: Consumer): void {
  const signal = consumer.signal;
  if (signal !== null) {
    signal.removeEventListener('abort', consumer.onAbort!);
    if (signal.aborted) {
      consumer.reject(signal.reason ?? new RequestAbortedError());
      return;
    }
  }
  consumer.resolve(undefined);
}
