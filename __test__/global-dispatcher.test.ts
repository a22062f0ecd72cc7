// The global dispatcher (the `.2` slot and its `.1` legacy mirror), the top-level request / stream /
// pipeline shortcuts, and compose() ordering on the Dispatcher base.
import { afterEach, describe, expect, it } from 'vitest';
import { Readable, Writable } from 'node:stream';
import { parse as parseLegacyUrl } from 'node:url';
import { Agent, Client, errors } from '../ts/index.js';
import type { DispatchFn, DispatchHandler, Dispatcher } from '../ts/index.js';
import { getGlobalDispatcher, setGlobalDispatcher } from '../ts/dispatcher/global.js';
import { Dispatcher1Wrapper } from '../ts/dispatcher/dispatcher1-wrapper.js';
import { pipeline, request, stream } from '../ts/api/shortcuts.js';
import { httpServer, type Running } from './fixtures/servers.js';

const kGlobal2 = Symbol.for('lib.globalDispatcher.2');
const kGlobal1 = Symbol.for('lib.globalDispatcher.1');

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
function track<T extends { close(): Promise<unknown> }>(x: T): T {
  cleanup.push(() => x.close());
  return x;
}
/** Installs `d` globally for one test, restoring the previous dispatcher afterwards. */
function useGlobal(d: Dispatcher): void {
  const previous = getGlobalDispatcher();
  setGlobalDispatcher(d);
  cleanup.push(() => setGlobalDispatcher(previous));
}

/** Answers with the method, the path (with search) and the request body. */
async function echoServer(): Promise<Running<import('node:http').Server>> {
  return track(
    await httpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => res.end(`${req.method} ${req.url} ${body}`));
    }),
  );
}

describe('global dispatcher', () => {
  it('creates a default Agent on first use and keeps it in the .2 slot with a .1 mirror', () => {
    const first = getGlobalDispatcher();
    expect(first).toBeInstanceOf(Agent);
    expect(getGlobalDispatcher()).toBe(first);
    expect(Reflect.get(globalThis, kGlobal2)).toBe(first);
    expect(Reflect.get(globalThis, kGlobal1)).toBeInstanceOf(Dispatcher1Wrapper);
  });

  it('setGlobalDispatcher stores the dispatcher and mirrors it wrapped for legacy consumers', async () => {
    const srv = await echoServer();
    const agent = track(new Agent());
    useGlobal(agent);
    expect(getGlobalDispatcher()).toBe(agent);
    expect(Reflect.get(globalThis, kGlobal2)).toBe(agent);
    const mirror = Reflect.get(globalThis, kGlobal1) as Dispatcher;
    expect(mirror).toBeInstanceOf(Dispatcher1Wrapper);

    // The mirror takes legacy handlers and drives the installed dispatcher.
    const body = await new Promise<string>((resolve, reject) => {
      const parts: Buffer[] = [];
      mirror.dispatch({ origin: srv.origin, path: '/legacy', method: 'GET' }, {
        onConnect() {},
        onHeaders: () => true,
        onData: (c) => void parts.push(c),
        onComplete: () => resolve(Buffer.concat(parts).toString()),
        onError: reject,
      });
    });
    expect(body).toBe('GET /legacy ');
  });

  it('setGlobalDispatcher refuses what is not a dispatcher', () => {
    for (const bad of [null, undefined, {}, 'agent', { dispatch: 1 }]) {
      expect(() => setGlobalDispatcher(bad as never)).toThrow(errors.InvalidArgumentError);
    }
  });
});

describe('top-level shortcuts', () => {
  it('request(url) goes through the global dispatcher, path and search from the URL', async () => {
    const srv = await echoServer();
    useGlobal(track(new Agent()));
    const res = await request(`${srv.origin}/a/b?x=1&y=2`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('GET /a/b?x=1&y=2 ');
  });

  it('request accepts a URL, a url object and opts.path; a body defaults the method to PUT', async () => {
    const srv = await echoServer();
    const dispatcher = track(new Agent());
    const viaUrl = await request(new URL(`${srv.origin}/u?q=1`), { dispatcher });
    expect(await viaUrl.body.text()).toBe('GET /u?q=1 ');
    const legacy = parseLegacyUrl(`${srv.origin}/legacy?z=9`);
    const viaObject = await request(
      { protocol: legacy.protocol!, hostname: legacy.hostname!, port: legacy.port!, pathname: legacy.pathname!, search: legacy.search! },
      { dispatcher },
    );
    expect(await viaObject.body.text()).toBe('GET /legacy?z=9 ');
    const viaPath = await request(srv.origin, { dispatcher, path: 'over', method: 'POST', body: 'b' });
    expect(await viaPath.body.text()).toBe('POST /over b');
    const put = await request(srv.origin, { dispatcher, body: 'payload' });
    expect(await put.body.text()).toBe('PUT / payload');
  });

  it('request takes a callback too', async () => {
    const srv = await echoServer();
    const dispatcher = track(new Agent());
    const text = await new Promise<string>((resolve, reject) =>
      request(`${srv.origin}/cb`, { dispatcher }, (err, data) => (err ? reject(err) : data.body.text().then(resolve))),
    );
    expect(text).toBe('GET /cb ');
  });

  it('rejects bad urls and options synchronously', () => {
    // A string that is not a URL throws node's own TypeError, as in undici.
    expect(() => request('not a url')).toThrow(TypeError);
    expect(() => request('ftp://example.com/')).toThrow(errors.InvalidArgumentError);
    expect(() => request(42 as never)).toThrow(errors.InvalidArgumentError);
    expect(() => request('http://127.0.0.1/', 'opts' as never)).toThrow(errors.InvalidArgumentError);
    expect(() => request('http://127.0.0.1/', { agent: {} } as never)).toThrow(errors.InvalidArgumentError);
  });

  it('stream(url, options, factory) writes the response into the Writable', async () => {
    const srv = await echoServer();
    useGlobal(track(new Agent()));
    let out = '';
    const data = await stream(`${srv.origin}/s`, { opaque: 'o' }, () =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          out += chunk;
          done();
        },
      }),
    );
    expect(out).toBe('GET /s ');
    expect(data.opaque).toBe('o');
  });

  it('pipeline(url, options, handler) sends what is written and reads the response', async () => {
    const srv = await echoServer();
    const dispatcher = track(new Agent());
    const duplex = pipeline(`${srv.origin}/p`, { dispatcher, method: 'POST' }, ({ body }) => body);
    let out = '';
    duplex.on('data', (c: Buffer) => (out += c));
    Readable.from(['up', 'load']).pipe(duplex);
    await new Promise((resolve, reject) => duplex.on('end', resolve).on('error', reject));
    expect(out).toBe('POST /p upload');
  });
});

describe('compose on the Dispatcher base', () => {
  it('the last interceptor sees the request first', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const order: string[] = [];
    const tag =
      (name: string) =>
      (dispatch: DispatchFn): DispatchFn =>
      (opts, handler: DispatchHandler) => {
        order.push(name);
        return dispatch({ ...opts, path: `${opts.path}/${name}` }, handler);
      };
    const composed = client.compose(tag('first'), tag('second'), tag('third'));
    const res = await composed.request({ path: '/c', method: 'GET' });
    expect(order).toEqual(['third', 'second', 'first']);
    expect(await res.body.text()).toBe('GET /c/third/second/first ');
    const viaArray = client.compose([tag('a'), tag('b')]);
    const res2 = await viaArray.request({ path: '/d', method: 'GET' });
    expect(await res2.body.text()).toBe('GET /d/b/a ');
  });
});
