// The Response fetch() returns reads its body straight from the dispatch handler when nothing has
// touched the stream, copies headers in only when used, and skips building a Request for simple
// calls (ts/fetch/fetch-response.ts, fetch.ts). These tests pin that each shortcut behaves as the
// ordinary path does: bodyUsed and locking, clone, blob types, streams after the shortcut was
// possible, aborts and errors, and the checks a Request would make.
import { describe, expect, it } from 'vitest';
import { Agent, Client } from '../ts/index.js';
import { fetch } from '../ts/fetch/fetch.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';
import { ANSWERING_DISPATCHER, GC_PRELUDE } from './fixtures/child-gc.js';

const cleanup = useCleanup();
const runChild = useChildRuns();
const serve = async (...args: Parameters<typeof servers.httpServer>) => cleanup.track(await servers.httpServer(...args));

/** Destroyed after the test: a failed one may leave a body unread. */
function agent(): Agent {
  const a = new Agent();
  cleanup.push(() => a.destroy());
  return a;
}

const payload = { hello: 'world', list: [1, 2, 3] };

async function jsonOrigin(): Promise<string> {
  const srv = await serve((req, res) => {
    res.setHeader('content-type', 'Application/JSON; Charset=UTF-8');
    res.setHeader('x-echo-ua', req.headers['user-agent'] ?? '');
    res.setHeader('x-echo-accept', req.headers.accept ?? '');
    res.setHeader('x-echo-method', req.method ?? '');
    res.end(JSON.stringify(payload));
  });
  return srv.origin;
}

describe('reading a fetch body', () => {
  it('arrayBuffer(), text() and json() give the body; bodyUsed and the locked stream follow', async () => {
    const origin = await jsonOrigin();
    const d = agent();
    const a = await fetch(`${origin}/a`, { dispatcher: d });
    expect(a.bodyUsed).toBe(false);
    const ab = await a.arrayBuffer();
    expect(ab).toBeInstanceOf(ArrayBuffer);
    expect(JSON.parse(Buffer.from(ab).toString())).toEqual(payload);
    expect(a.bodyUsed).toBe(true);
    expect(a.body!.locked).toBe(true);
    await expect(a.text()).rejects.toBeInstanceOf(TypeError);
    expect(() => a.clone()).toThrow(TypeError);

    const t = await fetch(`${origin}/t`, { dispatcher: d });
    expect(await t.text()).toBe(JSON.stringify(payload));
    await expect(t.json()).rejects.toBeInstanceOf(TypeError);

    const j = await fetch(`${origin}/j`, { dispatcher: d });
    expect(await j.json()).toEqual(payload);
  });

  it('json() of a body that is not JSON rejects with SyntaxError', async () => {
    const srv = await serve((_req, res) => res.end('not json'));
    const res = await fetch(srv.origin, { dispatcher: agent() });
    await expect(res.json()).rejects.toBeInstanceOf(SyntaxError);
  });

  it('text() drops a UTF-8 BOM and keeps multi-byte characters split across chunks', async () => {
    const bytes = Buffer.from('\ufeffcaf\u00e9 \u{1f600}', 'utf8');
    const srv = await serve((_req, res) => {
      res.write(bytes.subarray(0, 6));
      setImmediate(() => res.end(bytes.subarray(6)));
    });
    const res = await fetch(srv.origin, { dispatcher: agent() });
    expect(await res.text()).toBe('caf\u00e9 \u{1f600}');
  });

  it('headers appear when first asked for, with the URL and redirect flag', async () => {
    const srv = await serve((req, res) => {
      if (req.url === '/from') {
        res.writeHead(302, { location: '/to' });
        res.end();
        return;
      }
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end('ok');
    });
    const res = await fetch(`${srv.origin}/from#frag`, { dispatcher: agent() });
    expect(res.url).toBe(`${srv.origin}/to`);
    expect(res.redirected).toBe(true);
    expect(await res.text()).toBe('ok');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(res.headers.get('content-length')).toBe('2');
  });

  it('blob() takes its type from the headers, as Node normalizes it', async () => {
    const origin = await jsonOrigin();
    const res = await fetch(origin, { dispatcher: agent() });
    const blob = await res.blob();
    const expected = await new Response('', { headers: { 'content-type': 'Application/JSON; Charset=UTF-8' } }).blob();
    expect(blob.type).toBe(expected.type);
    expect(blob.type).not.toBe('');
    expect(JSON.parse(await blob.text())).toEqual(payload);
  });

  it('clone() before reading: both copies read the whole body', async () => {
    const origin = await jsonOrigin();
    const res = await fetch(origin, { dispatcher: agent() });
    const copy = res.clone();
    expect(copy.headers.get('content-type')).toBe('Application/JSON; Charset=UTF-8');
    expect(await res.json()).toEqual(payload);
    expect(await copy.text()).toBe(JSON.stringify(payload));
  });

  it('the body stream is made when first asked for: the same stream each time, and text() reads through it', async () => {
    const origin = await jsonOrigin();
    const res = await fetch(origin, { dispatcher: agent() });
    const stream = res.body!;
    expect(res.body).toBe(stream);
    expect(stream.locked).toBe(false);
    expect(res.bodyUsed).toBe(false);
    expect(await res.text()).toBe(JSON.stringify(payload));
    expect(res.body).toBe(stream);
    expect(stream.locked).toBe(true);
    expect(res.bodyUsed).toBe(true);
  });

  it('blob() and formData() read a body nobody touched; after text() they reject with TypeError', async () => {
    const srv = await serve((_req, res) => {
      res.setHeader('content-type', 'application/x-www-form-urlencoded');
      res.end('a=1&b=two');
    });
    const d = agent();
    const form = await (await fetch(srv.origin, { dispatcher: d })).formData();
    expect([...form.entries()]).toEqual([
      ['a', '1'],
      ['b', 'two'],
    ]);
    const read = await fetch(srv.origin, { dispatcher: d });
    await read.text();
    await expect(read.blob()).rejects.toBeInstanceOf(TypeError);
    await expect(read.formData()).rejects.toBeInstanceOf(TypeError);
    expect(read.body!.locked).toBe(true);
  });

  it('clone() after the stream was looked at: both copies read the whole body, and the clone clones again', async () => {
    const origin = await jsonOrigin();
    const res = await fetch(origin, { dispatcher: agent() });
    void res.body;
    const copy = res.clone();
    const second = copy.clone();
    expect(copy.url).toBe(res.url);
    expect(second.headers.get('content-type')).toBe('Application/JSON; Charset=UTF-8');
    expect(await copy.json()).toEqual(payload);
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe(JSON.stringify(payload));
    expect(await second.text()).toBe(JSON.stringify(payload));
  });

  it('a body stream read partly first: text() then rejects with TypeError', async () => {
    const srv = await serve((_req, res) => {
      res.write('first');
      setImmediate(() => res.end('second'));
    });
    const res = await fetch(srv.origin, { dispatcher: agent() });
    const reader = res.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('first');
    reader.releaseLock();
    expect(res.bodyUsed).toBe(true);
    await expect(res.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('a body stream taken but not read yet: text() rejects (locked), the reader gets every byte', async () => {
    const origin = await jsonOrigin();
    const res = await fetch(origin, { dispatcher: agent() });
    const reader = res.body!.getReader();
    await expect(res.text()).rejects.toBeInstanceOf(TypeError);
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    expect(JSON.parse(text)).toEqual(payload);
  });

  it('an abort after the whole body arrived leaves it readable; one before it ends rejects text()', async () => {
    const origin = await jsonOrigin();
    const ac = new AbortController();
    const res = await fetch(origin, { dispatcher: agent(), signal: ac.signal });
    // The 12-line response arrived with its head; wait until the handler has its end too.
    await new Promise((r) => setImmediate(r));
    ac.abort(new Error('late'));
    expect(await res.json()).toEqual(payload);

    const srv = await serve((_req, res2) => res2.write('part'));
    const ac2 = new AbortController();
    const partial = await fetch(srv.origin, { dispatcher: agent(), signal: ac2.signal });
    const text = partial.text();
    const reason = new Error('stop');
    ac2.abort(reason);
    await expect(text).rejects.toBe(reason);
  });

  it('a body cut short of its content-length rejects arrayBuffer() with TypeError, never a short body', async () => {
    const srv = await servers.rawServer(async (socket) => {
      await servers.readUntil(socket, (t) => servers.countRequests(t) >= 1);
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
      setImmediate(() => socket.destroy());
    });
    cleanup.track(srv);
    const client = new Client(srv.origin);
    cleanup.push(() => client.destroy());
    const res = await fetch(srv.origin, { dispatcher: client });
    const err = await res.arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('terminated');
  });

  it('an unread body pauses the dispatcher; arrayBuffer() then resumes and reads it whole', async () => {
    const size = 64 * 1024 * 1024; // far beyond socket buffers and the engine's queue bound
    const progress = new servers.BodyProgress();
    const srv = await serve(servers.backpressuredBody(size, 'r', progress));
    const res = await fetch(srv.origin, { dispatcher: agent() });
    await servers.serverStaysBlocked(progress);
    expect(progress.written).toBeLessThan(size);
    const ab = await res.arrayBuffer();
    expect(ab.byteLength).toBe(size);
    expect(Buffer.from(ab).equals(Buffer.alloc(size, 'r'))).toBe(true);
  });
});

describe('what a response costs', () => {
  it('a body read with text() makes no body stream: nothing left in the old generation per request', async () => {
    // On Node 20 each web stream left ~2 KB there for a full collection to remove (711 B per
    // request measured here before the stream was made on demand).
    const run = await runChild(
      undefined,
      'http://127.0.0.1:1',
      `${GC_PRELUDE}${ANSWERING_DISPATCHER}
      const go = async () => (await ferro.fetch(origin + '/a', { dispatcher: answering })).text();
      for (let i = 0; i < 2000; i++) await go();
      gc();
      gc();
      const before = oldGen();
      const n = 20000;
      for (let i = 0; i < n; i++) {
        if ((await go()) !== 'hello world\\n') throw new Error('wrong body');
        if (i % 500 === 0) gc({ type: 'minor' });
        // The answering dispatcher never leaves the microtask queue, so Node's resource timing
        // buffer (one entry per fetch, as undici makes) would hold every entry past its 250 until
        // the loop ends; any program doing I/O reaches the event loop between fetches, as this does.
        if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      console.log(Math.round((oldGen() - before) / n));
      `,
    );
    expect(Number(run.stdout)).toBeLessThan(200);
  });
});

describe('simple calls without a Request object', () => {
  it('sends the default headers, the caller’s headers, and a lower-case method normalized', async () => {
    const origin = await jsonOrigin();
    const d = agent();
    const plain = await fetch(origin, { dispatcher: d });
    expect(plain.headers.get('x-echo-ua')).toBe('undici');
    expect(plain.headers.get('x-echo-accept')).toBe('*/*');
    await plain.arrayBuffer();
    const custom = await fetch(new URL(origin), { dispatcher: d, method: 'head', headers: { 'user-agent': 'mine' } });
    expect(custom.headers.get('x-echo-ua')).toBe('mine');
    expect(custom.headers.get('x-echo-method')).toBe('HEAD');
    expect(await custom.text()).toBe('');
  });

  it('rejects what a Request would refuse, with TypeError', async () => {
    const d = agent();
    await expect(fetch('/relative', { dispatcher: d })).rejects.toBeInstanceOf(TypeError);
    await expect(fetch('http://user:pw@127.0.0.1:1/', { dispatcher: d })).rejects.toBeInstanceOf(TypeError);
    await expect(fetch('http://127.0.0.1:1/', { dispatcher: d, headers: { 'bad name': 'x' } })).rejects.toBeInstanceOf(TypeError);
    await expect(fetch('http://127.0.0.1:1/', { dispatcher: d, method: 'CONNECT' })).rejects.toBeInstanceOf(TypeError);
    await expect(
      fetch('http://127.0.0.1:1/', { dispatcher: d, signal: {} as AbortSignal }),
    ).rejects.toBeInstanceOf(TypeError);
  });

  it('an already aborted signal rejects with its reason before anything is sent', async () => {
    let requests = 0;
    const srv = await serve((_req, res) => {
      requests++;
      res.end();
    });
    const reason = new Error('before');
    await expect(fetch(srv.origin, { dispatcher: agent(), signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(requests).toBe(0);
  });
});
