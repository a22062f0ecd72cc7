// fetch() on ferro dispatchers against local servers — bodies both ways, streaming, headers,
// redirects, content decoding, abort and network errors — and the opt-in that puts Node's own
// globalThis.fetch on the ferro engine.
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { Agent, Client } from '../ts/index.js';
import type { Dispatcher, DispatchOptions } from '../ts/index.js';
import { fetch } from '../ts/fetch/fetch.js';
import { installGlobalFetch } from '../ts/fetch/global-fetch.js';
import { getGlobalDispatcher, setGlobalDispatcher } from '../ts/dispatcher/global.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { ZSTD_PLAIN, ZSTD_TEXT } from './fixtures/zstd.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function serve(...args: Parameters<typeof httpServer>): Promise<Running<import('node:http').Server>> {
  const running = await httpServer(...args);
  cleanup.push(() => running.close());
  return running;
}

function agent(): Agent {
  const a = new Agent();
  cleanup.push(() => a.close());
  return a;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** A dispatcher that records every request before passing it on. */
function spy(inner: Dispatcher): { dispatcher: Dispatcher; calls: DispatchOptions[] } {
  const calls: DispatchOptions[] = [];
  const dispatcher = inner.compose((dispatch) => (opts, handler) => {
    calls.push(opts);
    return dispatch(opts, handler);
  });
  return { dispatcher, calls };
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const echo = (): ReturnType<typeof serve> =>
  serve(async (req, res) => {
    const body = await readAll(req);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString() }));
  });

describe('fetch basics', () => {
  it('GET text and JSON', async () => {
    const { origin } = await serve((req, res) => {
      if (req.url === '/json') {
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true,"n":1}');
      } else res.end('hello');
    });
    const dispatcher = agent();
    const text = await fetch(`${origin}/text`, { dispatcher });
    expect(text).toBeInstanceOf(Response);
    expect(text.status).toBe(200);
    expect(text.statusText).toBe('OK');
    expect(text.ok).toBe(true);
    expect(text.url).toBe(`${origin}/text`);
    expect(text.redirected).toBe(false);
    expect(await text.text()).toBe('hello');
    const json = await fetch(new URL('/json', origin), { dispatcher });
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(await json.json()).toEqual({ ok: true, n: 1 });
  });

  it('POST with string, Uint8Array and ReadableStream bodies', async () => {
    const { origin } = await echo();
    const dispatcher = agent();
    const str = await (await fetch(`${origin}/s?q=1`, { method: 'POST', body: 'text body', dispatcher })).json();
    expect(str).toMatchObject({ method: 'POST', url: '/s?q=1', body: 'text body' });
    expect(str.headers['content-type']).toBe('text/plain;charset=UTF-8');

    const bytes = await (await fetch(`${origin}/b`, { method: 'PUT', body: new TextEncoder().encode('bytes'), dispatcher })).json();
    expect(bytes).toMatchObject({ method: 'PUT', body: 'bytes' });

    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('stre'));
        c.enqueue(new TextEncoder().encode('amed'));
        c.close();
      },
    });
    const streamed = await (
      await fetch(`${origin}/r`, { method: 'POST', body: stream, duplex: 'half', dispatcher } as RequestInit & { dispatcher: Dispatcher })
    ).json();
    expect(streamed).toMatchObject({ method: 'POST', body: 'streamed' });
  });

  it('a Request object as input', async () => {
    const { origin } = await echo();
    const req = new Request(`${origin}/req`, { method: 'PATCH', body: 'from request', headers: { 'x-one': '1' } });
    const got = await (await fetch(req, { dispatcher: agent() })).json();
    expect(got).toMatchObject({ method: 'PATCH', url: '/req', body: 'from request' });
    expect(got.headers['x-one']).toBe('1');
  });

  it('headers both ways, with several set-cookie', async () => {
    const { origin } = await serve((req, res) => {
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2']);
      res.setHeader('x-seen', String(req.headers['x-custom']));
      res.setHeader('x-accept', String(req.headers.accept));
      res.end();
    });
    const res = await fetch(origin, { headers: { 'X-Custom': 'value' }, dispatcher: agent() });
    expect(res.headers.get('x-seen')).toBe('value');
    expect(res.headers.get('x-accept')).toBe('*/*');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2']);
    expect(await res.text()).toBe('');
  });

  it('null-body statuses give a null body', async () => {
    const { origin } = await serve((_req, res) => {
      res.statusCode = 204;
      res.end();
    });
    const res = await fetch(origin, { dispatcher: agent() });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('uses init.dispatcher, else the global dispatcher', async () => {
    const { origin } = await serve((_req, res) => res.end('x'));
    const client = new Client(origin);
    cleanup.push(() => client.close());
    const own = spy(client);
    await (await fetch(`${origin}/own`, { dispatcher: own.dispatcher })).text();
    expect(own.calls.map((c) => c.path)).toEqual(['/own']);

    const global = spy(agent());
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(global.dispatcher);
    cleanup.push(() => setGlobalDispatcher(previous));
    await (await fetch(`${origin}/global`)).text();
    expect(global.calls.map((c) => [c.origin, c.path, c.method])).toEqual([[origin, '/global', 'GET']]);
    expect(own.calls).toHaveLength(1);
  });
});

describe('response streaming', () => {
  it('hands chunks over as they arrive', async () => {
    const next = deferred();
    const { origin } = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      await next.promise; // the rest only once the client has seen the first chunk
      res.end('second');
    });
    const res = await fetch(origin, { dispatcher: agent() });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('first ');
    next.resolve();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe('second');
  });

  it('pauses the dispatcher while the body is not read', async () => {
    const size = 8 * 1024 * 1024;
    const { origin } = await serve((_req, res) => res.end(Buffer.alloc(size, 'x')));
    let delivered = 0;
    // Resolved by a pause that comes from the body stream filling up (past its 64 KiB mark).
    const paused = deferred<number>();
    const dispatcher = agent().compose((dispatch) => (opts, handler) =>
      dispatch(opts, {
        onRequestStart: (c, ctx) => {
          const pause = c.pause.bind(c);
          c.pause = () => {
            if (delivered >= 64 * 1024) paused.resolve(delivered);
            pause();
          };
          handler.onRequestStart?.(c, ctx);
        },
        onResponseStart: (c, s, h, m) => handler.onResponseStart?.(c, s, h, m),
        onResponseData: (c, chunk) => {
          delivered += chunk.length;
          handler.onResponseData?.(c, chunk);
        },
        onResponseEnd: (c, t) => handler.onResponseEnd?.(c, t),
        onResponseError: (c, e) => handler.onResponseError?.(c, e),
      }),
    );
    const res = await fetch(origin, { dispatcher });
    expect(await paused.promise).toBeLessThan(size);
    expect((await res.arrayBuffer()).byteLength).toBe(size);
  });
});

describe('redirects', () => {
  async function redirecting(): Promise<Running<import('node:http').Server>> {
    return serve(async (req, res) => {
      const body = (await readAll(req)).toString();
      const m = /^\/(\d{3})(\/.*)?$/.exec(req.url!);
      if (m) {
        res.writeHead(Number(m[1]), { location: m[2] ?? '/end' });
        res.end('redirect body');
        return;
      }
      if (req.url!.startsWith('/loop')) {
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, method: req.method, body, auth: req.headers.authorization ?? null }));
    });
  }

  it('follows by default: 303 turns POST into GET, 307 keeps method and body', async () => {
    const { origin } = await redirecting();
    const dispatcher = agent();
    const r303 = await fetch(`${origin}/303`, { method: 'POST', body: 'payload', dispatcher });
    expect(r303.redirected).toBe(true);
    expect(r303.url).toBe(`${origin}/end`);
    expect(await r303.json()).toEqual({ url: '/end', method: 'GET', body: '', auth: null });

    const r307 = await fetch(`${origin}/307`, { method: 'POST', body: 'payload', dispatcher });
    expect(await r307.json()).toMatchObject({ url: '/end', method: 'POST', body: 'payload' });

    const r301 = await fetch(`${origin}/301/302/end2`, { method: 'POST', body: 'payload', dispatcher });
    expect(await r301.json()).toMatchObject({ url: '/end2', method: 'GET', body: '' });
  });

  it('drops authorization on a cross-origin redirect', async () => {
    const target = await redirecting();
    const { origin } = await redirecting();
    const dispatcher = agent();
    const same = await fetch(`${origin}/302`, { headers: { authorization: 'secret' }, dispatcher });
    expect((await same.json()).auth).toBe('secret');
    const hop = await serve((_req, res) => {
      res.writeHead(302, { location: `${target.origin}/end` });
      res.end();
    });
    const crossed = await fetch(hop.origin, { headers: { authorization: 'secret' }, dispatcher });
    expect(crossed.url).toBe(`${target.origin}/end`);
    expect((await crossed.json()).auth).toBeNull();
  });

  it("'manual' returns the redirect, 'error' rejects", async () => {
    const { origin } = await redirecting();
    const dispatcher = agent();
    const manual = await fetch(`${origin}/302`, { redirect: 'manual', dispatcher });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('/end');
    expect(await manual.text()).toBe('redirect body');
    const err = await fetch(`${origin}/302`, { redirect: 'error', dispatcher }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('fetch failed');
  });

  it('gives up after 20 redirects, and on a 307 with a streamed body', async () => {
    const { origin } = await redirecting();
    const dispatcher = agent();
    const loop = await fetch(`${origin}/loop`, { dispatcher }).catch((e: unknown) => e);
    expect(loop).toBeInstanceOf(TypeError);
    expect(((loop as Error).cause as Error).message).toMatch(/redirect count/);

    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('once'));
        c.close();
      },
    });
    const init = { method: 'POST', body, duplex: 'half', dispatcher } as RequestInit & { dispatcher: Dispatcher };
    const streamed = await fetch(`${origin}/307`, init).catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(TypeError);
  });
});

describe('content decoding', () => {
  const text = 'decoded text '.repeat(1000);
  const encoders: Record<string, (b: Buffer) => Buffer> = {
    gzip: (b) => zlib.gzipSync(b),
    br: (b) => zlib.brotliCompressSync(b),
    deflate: (b) => zlib.deflateSync(b),
    'deflate (raw)': (b) => zlib.deflateRawSync(b),
    'gzip, br': (b) => zlib.brotliCompressSync(zlib.gzipSync(b)),
  };

  for (const [name, encode] of Object.entries(encoders)) {
    it(name, async () => {
      const coding = name.replace(' (raw)', '');
      const { origin } = await serve((_req, res) => {
        res.writeHead(200, { 'content-encoding': coding });
        res.end(encode(Buffer.from(text)));
      });
      const res = await fetch(origin, { dispatcher: agent() });
      expect(res.headers.get('content-encoding')).toBe(coding);
      expect(await res.text()).toBe(text);
    });
  }

  it('asks for compressed responses and leaves unknown codings alone', async () => {
    const { origin } = await serve((req, res) => {
      res.writeHead(200, { 'content-encoding': 'unknown' });
      res.end(String(req.headers['accept-encoding']));
    });
    const res = await fetch(origin, { dispatcher: agent() });
    // Over plain http, as undici's fetch asks (br and zstd only over https: fetch-compat.test.ts).
    expect(await res.text()).toBe('gzip, deflate');
  });

  it('zstd, decoded by the engine on every supported Node', async () => {
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'zstd' });
      res.end(ZSTD_TEXT);
    });
    expect(await (await fetch(origin, { dispatcher: agent() })).text()).toBe(ZSTD_PLAIN);
  });

  it('a gzip stream cut short inside a complete HTTP body ends with what was decoded', async () => {
    const gz = zlib.gzipSync(text);
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gz.subarray(0, gz.length - 8));
    });
    expect(await (await fetch(origin, { dispatcher: agent() })).text()).toBe(text);
  });

  it('a body inflating to 64 MiB is read in bounded pieces', async () => {
    const gz = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 'a'));
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gz);
    });
    const res = await fetch(origin, { dispatcher: agent() });
    let total = 0;
    let largest = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.length;
      largest = Math.max(largest, chunk.length);
    }
    expect(total).toBe(64 * 1024 * 1024);
    expect(largest).toBeLessThanOrEqual(64 * 1024);
  });

  it('a corrupt body errors the stream', async () => {
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end('not gzip at all');
    });
    const res = await fetch(origin, { dispatcher: agent() });
    await expect(res.text()).rejects.toMatchObject({ name: 'ContentDecodingError', code: 'Z_DATA_ERROR' });
  });
});

describe('abort and errors', () => {
  it('an aborted signal rejects before anything is sent', async () => {
    let hits = 0;
    const { origin } = await serve((_req, res) => {
      hits++;
      res.end();
    });
    const err = await fetch(origin, { signal: AbortSignal.abort(), dispatcher: agent() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('AbortError');
    const reason = new Error('mine');
    await expect(fetch(origin, { signal: AbortSignal.abort(reason), dispatcher: agent() })).rejects.toBe(reason);
    expect(hits).toBe(0);
  });

  it('abort while waiting for the head', async () => {
    const arrived = deferred();
    const { origin } = await serve(() => arrived.resolve()); // never answers
    const ac = new AbortController();
    const pending = fetch(origin, { signal: ac.signal, dispatcher: agent() });
    await arrived.promise;
    ac.abort();
    const err = await pending.catch((e: unknown) => e);
    expect((err as DOMException).name).toBe('AbortError');
  });

  it('abort during the body errors the body stream with the reason', async () => {
    const { origin } = await serve((_req, res) => {
      res.writeHead(200);
      res.write('part');
    });
    const ac = new AbortController();
    const res = await fetch(origin, { signal: ac.signal, dispatcher: agent() });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('part');
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
  });

  it('connection refused is a TypeError with the cause', async () => {
    const { origin, close } = await httpServer((_req, res) => res.end());
    await close();
    const err = await fetch(origin, { dispatcher: agent() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('fetch failed');
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('a response cut short errors the body', async () => {
    const { origin } = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('short');
      setImmediate(() => req.socket.destroy());
    });
    const res = await fetch(origin, { dispatcher: agent() });
    const err = await res.text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
  });

  it('rejects schemes other than http(s)', async () => {
    await expect(fetch('ftp://example.com/', { dispatcher: agent() })).rejects.toThrow(TypeError);
  });
});

describe("Node's built-in fetch on the ferro engine", () => {
  it('globalThis.fetch goes through the ferro dispatcher once opted in', async () => {
    const seen: string[] = [];
    const { origin } = await serve(async (req, res) => {
      const body = await readAll(req);
      seen.push(`${req.method} ${req.url} ${body.toString()}`);
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end(`echo ${body.toString()}`);
    });
    const ferroAgent = agent();
    const connects: string[] = [];
    ferroAgent.on('connect', (o: URL) => connects.push(String(o)));
    const { dispatcher, calls } = spy(ferroAgent);
    const nodeSlot = Symbol.for('undici.globalDispatcher.1');
    const uninstall = installGlobalFetch(dispatcher);
    cleanup.push(uninstall);
    const installed = Reflect.get(globalThis, nodeSlot) as object;

    const get = await globalThis.fetch(`${origin}/node-get`);
    expect(get.status).toBe(200);
    expect(get.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await get.text()).toBe('echo ');

    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed '));
        c.enqueue(new TextEncoder().encode('up'));
        c.close();
      },
    });
    const post = await globalThis.fetch(`${origin}/node-post`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await post.text()).toBe('echo streamed up');

    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /node-get', 'POST /node-post']);
    expect(seen).toEqual(['GET /node-get ', 'POST /node-post streamed up']);
    expect(connects).toContain(`${origin}/`);

    uninstall();
    expect(Reflect.get(globalThis, nodeSlot)).not.toBe(installed);
    await (await globalThis.fetch(`${origin}/after`)).text();
    expect(calls).toHaveLength(2);
    expect(seen).toHaveLength(3);
  });

  it("streams a large response to Node's fetch with backpressure", async () => {
    const size = 4 * 1024 * 1024;
    const { origin } = await serve((_req, res) => res.end(Buffer.alloc(size, 'y')));
    cleanup.push(installGlobalFetch(agent()));
    const res = await globalThis.fetch(origin);
    let total = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) total += chunk.byteLength;
    expect(total).toBe(size);
  });

  it('Node fetch errors and aborts come through', async () => {
    const { origin, close } = await httpServer((_req, res) => res.end());
    await close();
    cleanup.push(installGlobalFetch(agent()));
    const err = await globalThis.fetch(origin).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');

    const arrived = deferred();
    const hang = await serve(() => arrived.resolve());
    const ac = new AbortController();
    const pending = globalThis.fetch(hang.origin, { signal: ac.signal });
    await arrived.promise;
    ac.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
