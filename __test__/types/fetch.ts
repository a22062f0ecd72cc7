// ferro's own fetch types: no DOM lib needed (types.test.ts compiles this with lib esnext alone and
// with dom), `init.dispatcher` is ferro's Dispatcher, and Node's runtime classes fit them.
import {
  Agent,
  fetch,
  FormData,
  Headers,
  Request,
  Response,
  type BodyInit,
  type FetchInit,
  type FormDataEntryValue,
  type HeadersInit,
  type ReferrerPolicy,
  type RequestCache,
  type RequestInfo,
  type RequestInit,
  type RequestMode,
  type ResponseInit,
  type ResponseType,
  type SpecIterableIterator,
} from 'ferro';

export async function usage(): Promise<void> {
  const init: RequestInit = { method: 'POST', body: 'x', dispatcher: new Agent(), cache: 'no-store', mode: 'cors' };
  const asFetchInit: FetchInit = init;
  const info: RequestInfo = new Request('http://127.0.0.1/', init);
  const res: Response = await fetch(info, asFetchInit);
  const bytes: Uint8Array = await res.bytes();
  const copy: Response = res.clone();
  const type: ResponseType = copy.type;
  const headersInit: HeadersInit = [['a', 'b']];
  const headers = new Headers(headersInit);
  const keys: SpecIterableIterator<string> = headers.keys();
  const form = new FormData();
  form.append('a', 'b');
  const entry: FormDataEntryValue | null = form.get('a');
  const body: BodyInit = new Uint8Array(1);
  const responseInit: ResponseInit = { status: 201 };
  const made = new Response(body, responseInit);
  const json = Response.json({ a: 1 });
  const cache: RequestCache = new Request('http://127.0.0.1/').cache;
  const mode: RequestMode = 'no-cors';
  const policy: ReferrerPolicy = 'origin';
  void [bytes, keys, entry, made, json, cache, mode, policy, type];
  // @ts-expect-error a dispatcher must be a ferro Dispatcher
  await fetch('http://127.0.0.1/', { dispatcher: {} });
  // @ts-expect-error not a RequestMode
  const badMode: RequestMode = 'everywhere';
  void badMode;
  // @ts-expect-error HeadersInit pairs are [string, string]
  new Headers([['a', 1]]);
}

// Subclasses override clone() as a method (undici declares it a method, not a property).
export class MyResponse extends Response {
  override clone(): MyResponse {
    return this;
  }
}
export class MyRequest extends Request {
  override clone(): MyRequest {
    return this;
  }
}

// A global Headers (from @types/node) is accepted where ferro's is asked for.
export const fromGlobal: Headers = new globalThis.Headers();
