// The Response fetch() returns: Node's own Response, with what fetch knows that the constructor
// cannot take (url, redirected), headers copied in only when first used, and arrayBuffer() /
// text() / json() served straight from the dispatch handler while nobody has touched the body
// stream. Everything else (body, clone, blob, formData, a stream already being read) is Node's.
// The class is defined on the first response: naming `Response` loads Node's fetch implementation,
// which importing ferro should not (see whatwg-classes.ts).
import type { IncomingHeaders } from '../core/types.js';
import { fillHeaders, type DirectKind, type FetchHandler } from './fetch-handler.js';

type FetchResponseArgs = [
  body: ReadableStream<Uint8Array> | null,
  init: ResponseInit,
  headers: IncomingHeaders,
  url: string,
  redirected: boolean,
  handler: FetchHandler | null,
];

const defineFetchResponse = (Base: typeof Response) =>
  class FetchResponse extends Base {
    readonly #url: string;
    readonly #redirected: boolean;
    /** Headers not yet copied into the Response's own. */
    #rawHeaders: IncomingHeaders | null;
    /** Set while a direct read is possible; null once the stream (or a clone) owns the body. */
    #handler: FetchHandler | null;
    #used = false;

    constructor(...[body, init, headers, url, redirected, handler]: FetchResponseArgs) {
      super(body, init);
      this.#rawHeaders = headers;
      this.#url = url;
      this.#redirected = redirected;
      this.#handler = body === null ? null : handler;
    }

    override get url(): string {
      return this.#url;
    }

    override get redirected(): boolean {
      return this.#redirected;
    }

    override get headers(): Headers {
      const headers = super.headers;
      const raw = this.#rawHeaders;
      if (raw !== null) {
        this.#rawHeaders = null;
        fillHeaders(headers, raw);
      }
      return headers;
    }

    override get bodyUsed(): boolean {
      return this.#used || super.bodyUsed;
    }

    override arrayBuffer(): Promise<ArrayBuffer> {
      return (this.#take('arrayBuffer') as Promise<ArrayBuffer> | null) ?? super.arrayBuffer();
    }

    override text(): Promise<string> {
      return (this.#take('text') as Promise<string> | null) ?? super.text();
    }

    override json(): Promise<unknown> {
      return this.#take('json') ?? super.json();
    }

    override blob(): Promise<Blob> {
      this.#release();
      return super.blob();
    }

    override formData(): Promise<FormData> {
      this.#release();
      return super.formData();
    }

    override clone(): Response {
      // A clone reads through the tee'd stream: both copies get their bytes from it from now on.
      this.#release();
      return super.clone();
    }

    /** The body for a direct consumer, or null when Node's own path must serve this call. */
    #take(kind: DirectKind): Promise<unknown> | null {
      const handler = this.#handler;
      if (handler === null || !handler.direct || super.bodyUsed) return null;
      const stream = super.body;
      if (stream === null || stream.locked) return null;
      this.#handler = null;
      this.#used = true;
      // Locked, as a consumed body is: its stream can no longer be read, cloned or consumed.
      stream.getReader();
      return handler.take(kind);
    }

    /** Node's own methods read the stream and the header list: hand both over. */
    #release(): void {
      this.#handler = null;
      void this.headers;
    }
  };

let FetchResponse: ReturnType<typeof defineFetchResponse> | undefined;

export function newFetchResponse(...args: FetchResponseArgs): Response {
  FetchResponse ??= defineFetchResponse(globalThis.Response);
  return new FetchResponse(...args);
}
