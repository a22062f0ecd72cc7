// interceptors.responseError(opts): a response with status >= 400 becomes an
// errors.ResponseError carrying its status, headers and body (parsed for JSON content types,
// text otherwise; at most `maxSize` bytes of it, default 1 MiB, 0 for no limit).
import { InvalidArgumentError, ResponseError } from '../core/errors.js';
import type {
  DispatchController,
  DispatcherComposeInterceptor,
  DispatchHandler,
  DispatchOptions,
  IncomingHeaders,
} from '../core/types.js';
import { DecoratorHandler } from '../handler/decorator-handler.js';

export interface ResponseErrorInterceptorOpts {
  /** @deprecated Ignored, as in undici: the interceptor always rejects error responses. */
  throwOnError?: boolean;
  /** Most body bytes kept in the error; 0: no limit. Default 1 MiB. */
  maxSize?: number;
}

const DEFAULT_MAX_SIZE = 1024 * 1024;

function isJson(contentType: string | string[] | undefined): boolean {
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

class ResponseErrorHandler extends DecoratorHandler {
  readonly #maxSize: number;
  #statusCode = 0;
  #headers: IncomingHeaders = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(maxSize: number, handler: DispatchHandler) {
    super(handler);
    this.#maxSize = maxSize;
  }

  override onRequestStart(controller: DispatchController, context: object): void {
    // A handler below may send the request again (retry): each attempt starts clean.
    this.#statusCode = 0;
    this.#chunks = [];
    this.#size = 0;
    this.#truncated = false;
    super.onRequestStart(controller, context);
  }

  override onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    if (statusCode < 400) {
      super.onResponseStart(controller, statusCode, headers, statusMessage);
      return;
    }
    this.#statusCode = statusCode;
    this.#headers = headers;
  }

  override onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.#statusCode < 400) {
      super.onResponseData(controller, chunk);
      return;
    }
    const room = this.#maxSize === 0 ? chunk.length : this.#maxSize - this.#size;
    if (chunk.length > room) this.#truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  override onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    if (this.#statusCode < 400) {
      super.onResponseEnd(controller, trailers);
      return;
    }
    super.onResponseError(controller, this.#error());
  }

  #error(): ResponseError {
    const text = Buffer.concat(this.#chunks).toString('utf8');
    let body: unknown = text;
    if (!this.#truncated && isJson(this.#headers['content-type'])) {
      try {
        body = JSON.parse(text);
      } catch {
        /* not valid JSON after all: keep the text */
      }
    }
    return new ResponseError('Response Error', this.#statusCode, {
      headers: this.#headers,
      body,
      bodyTruncated: this.#truncated,
    });
  }
}

export function responseError(opts: ResponseErrorInterceptorOpts = {}): DispatcherComposeInterceptor {
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('responseError: options must be an object');
  const maxSize = opts.maxSize ?? DEFAULT_MAX_SIZE;
  if (!Number.isSafeInteger(maxSize) || maxSize < 0) {
    throw new InvalidArgumentError('maxSize must be a non-negative integer');
  }
  return (dispatch) =>
    function responseErrorInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      return dispatch(options, new ResponseErrorHandler(maxSize, handler));
    };
}
