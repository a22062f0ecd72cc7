// The Response fetch() returns: Node's own Response, with what fetch knows that the constructor
// cannot take (url, redirected), headers copied in only when first used, and a body stream made
// only when someone asks for it. arrayBuffer() / bytes() / text() / json() are served straight from the
// dispatch handler while nobody has touched the body stream; blob(), formData() and clone() make
// the stream and go through Node's code.
// The class is defined on the first response: naming `Response` loads Node's fetch implementation,
// which importing ferro should not (see whatwg-classes.ts).
import { Readable } from 'node:stream';
import type { IncomingHeaders } from '../core/types.js';
import { bodyValue, fillHeaders, type DirectKind, type FetchHandler } from './fetch-handler.js';

/**
 * Where the body comes from: the round trip's handler (the stream is made on first use), a stream
 * Node's Response holds (a clone's), or null for a response without a body.
 */
type BodySource = FetchHandler | BodyStream | null;

type FetchResponseArgs = [source: BodySource, init: ResponseInit, headers: IncomingHeaders, url: string, redirected: boolean];

/** Whether a web stream has been read from or cancelled (typed for Node streams only). */
const isDisturbed = (stream: ReadableStream): boolean => Readable.isDisturbed(stream as unknown as Readable);

/** A Response's body stream, as lib.dom types it. */
type BodyStream = NonNullable<Response['body']>;

const unusable = (): TypeError => new TypeError('Body is unusable: Body has already been read');

/** Reads a stream to its end, as Node's consumers do; rejects with the stream's error. */
async function readAll(stream: BodyStream): Promise<{ chunks: Buffer[]; length: number }> {
  const reader = stream.getReader();
  const chunks: Buffer[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { chunks, length };
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    length += value.byteLength;
  }
}

const defineFetchResponse = (Base: typeof Response) =>
  class FetchResponse extends Base {
    readonly #url: string;
    readonly #redirected: boolean;
    /** Headers not yet copied into the Response's own. */
    #rawHeaders: IncomingHeaders | null;
    /** The round trip, while this Response serves the body itself (not Node's Response). */
    #handler: FetchHandler | null;
    /** The body stream once made (only with a handler). */
    #stream: BodyStream | null = null;
    /** A consumer took the body straight from the handler. */
    #used = false;
    /** Cloned: a tee reads the handler's stream, so consumers must read this copy's branch. */
    #teed = false;

    constructor(...[source, init, headers, url, redirected]: FetchResponseArgs) {
      const handler = source !== null && !(source instanceof ReadableStream) ? source : null;
      super(handler === null ? (source as BodyStream | null) : null, init);
      this.#handler = handler;
      this.#rawHeaders = headers;
      this.#url = url;
      this.#redirected = redirected;
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

    override get body(): BodyStream | null {
      const handler = this.#handler;
      if (handler === null) return super.body;
      let stream = this.#stream;
      if (stream === null) {
        stream = this.#stream = handler.stream() as BodyStream;
        // Taken whole already: the stream is locked, as a consumed body's is.
        if (this.#used) stream.getReader();
      }
      return stream;
    }

    override get bodyUsed(): boolean {
      if (this.#handler === null) return super.bodyUsed;
      return this.#used || (this.#stream !== null && isDisturbed(this.#stream));
    }

    override arrayBuffer(): Promise<ArrayBuffer> {
      return this.#consume('arrayBuffer') as Promise<ArrayBuffer>;
    }

    override bytes(): Promise<Uint8Array<ArrayBuffer>> {
      return this.#consume('bytes') as Promise<Uint8Array<ArrayBuffer>>;
    }

    override text(): Promise<string> {
      return this.#consume('text') as Promise<string>;
    }

    override json(): Promise<unknown> {
      return this.#consume('json');
    }

    override blob(): Promise<Blob> {
      if (this.#handler === null) return super.blob();
      return this.#nodeResponse()?.blob() ?? Promise.reject(unusable());
    }

    override formData(): Promise<FormData> {
      if (this.#handler === null) return super.formData();
      return this.#nodeResponse()?.formData() ?? Promise.reject(unusable());
    }

    override clone(): Response {
      const handler = this.#handler;
      if (handler === null) return super.clone();
      if (this.bodyUsed || this.body!.locked) throw new TypeError('Response.clone: Body has already been consumed.');
      // Both copies read the tee'd stream from now on; the clone's is Node's to serve.
      const [mine, theirs] = this.#stream!.tee();
      this.#stream = mine;
      this.#teed = true;
      const init = { status: this.status, statusText: this.statusText, headers: this.headers };
      return newFetchResponse(theirs, init, {}, this.#url, this.#redirected);
    }

    #consume(kind: DirectKind): Promise<unknown> {
      const handler = this.#handler;
      if (handler === null) {
        return kind === 'arrayBuffer' ? super.arrayBuffer() : kind === 'bytes' ? super.bytes() : kind === 'text' ? super.text() : super.json();
      }
      const stream = this.#stream;
      if (this.#used || (stream !== null && (stream.locked || isDisturbed(stream)))) return Promise.reject(unusable());
      if (handler.direct && !this.#teed) {
        this.#used = true;
        // Locked, as a consumed body's is: it can no longer be read, cloned or consumed.
        stream?.getReader();
        return handler.take(kind);
      }
      // The stream carries the body already (it was read from, or the body is decoded).
      return readAll(this.body!).then(({ chunks, length }) => bodyValue(kind, chunks, length));
    }

    /** A Response of Node's over this body, for the consumers it implements; null if the body is used. */
    #nodeResponse(): Response | null {
      const stream = this.body!;
      if (this.#used || stream.locked || isDisturbed(stream)) return null;
      return new Base(stream, { headers: this.headers });
    }
  };

let FetchResponse: ReturnType<typeof defineFetchResponse> | undefined;

export function newFetchResponse(...args: FetchResponseArgs): Response {
  FetchResponse ??= defineFetchResponse(globalThis.Response);
  return new FetchResponse(...args);
}
