// Legacy (Dispatcher 1) handlers: accepted by dispatch() on real and mock dispatchers through the
// adapter, pause by returning false, and Dispatcher1Wrapper serving legacy consumers — Node's own
// fetch among them — from a controller-only dispatcher.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Client, errors } from '../ts/index.js';
import type { DispatchFn, DispatchHandler, DispatchOptions, Dispatcher } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { Dispatcher1Wrapper } from '../ts/dispatcher/dispatcher1-wrapper.js';
import { isLegacyHandler, toControllerHandler } from '../ts/handler/legacy-handler.js';
import { BodyProgress, httpServer, type Running, backpressuredBody, serverStaysBlocked } from './fixtures/servers.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
function track<T extends { close(): Promise<unknown> }>(x: T): T {
  cleanup.push(() => x.close());
  return x;
}
async function serve(...args: Parameters<typeof httpServer>): Promise<Running<import('node:http').Server>> {
  return track(await httpServer(...args));
}

interface LegacyRecord {
  events: string[];
  status?: number;
  statusText?: string;
  rawHeaders?: Buffer[];
  rawTrailers?: Buffer[] | null;
  body: Buffer[];
  error?: Error;
  abort?: (err?: Error) => void;
  resume?: () => void;
  done: Promise<void>;
}

/** A handler with only the legacy callbacks; `hooks` may return false from onHeaders / onData. */
function legacy(
  hooks: { onHeaders?: (rec: LegacyRecord) => boolean | void; onData?: (rec: LegacyRecord, c: Buffer) => boolean | void; onConnect?: (rec: LegacyRecord) => void } = {},
): [DispatchHandler, LegacyRecord] {
  let finish!: () => void;
  const rec: LegacyRecord = { events: [], body: [], done: new Promise((r) => (finish = r)) };
  const handler: DispatchHandler = {
    onConnect(abort, context) {
      rec.events.push('connect');
      rec.abort = abort;
      expect(typeof context).toBe('object');
      hooks.onConnect?.(rec);
    },
    onHeaders(status, rawHeaders, resume, statusText) {
      rec.events.push(`headers ${status}`);
      rec.status = status;
      rec.statusText = statusText;
      rec.rawHeaders = rawHeaders;
      rec.resume = resume;
      return hooks.onHeaders?.(rec) ?? true;
    },
    onData(chunk) {
      rec.body.push(chunk);
      return hooks.onData?.(rec, chunk) ?? true;
    },
    onComplete(rawTrailers) {
      rec.events.push('complete');
      rec.rawTrailers = rawTrailers;
      finish();
    },
    onError(err) {
      rec.events.push(`error ${err.message}`);
      rec.error = err;
      finish();
    },
  };
  return [handler, rec];
}

/** Pairs of a raw header list as strings, names lower-cased. */
function pairs(raw: Buffer[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!.toString().toLowerCase(), raw[i + 1]!.toString()]);
  return out;
}

describe('legacy handlers on a real Client', () => {
  it('get onConnect, onHeaders with raw Buffer headers, onData and onComplete with raw trailers', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, 'Fine', { 'X-One': 'a', Trailer: 'X-Sum' });
      res.write('hello ');
      res.addTrailers({ 'X-Sum': '42' });
      res.end('legacy');
    });
    const client = track(new Client(srv.origin));
    const [handler, rec] = legacy();
    expect(isLegacyHandler(handler)).toBe(true);
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.events).toEqual(['connect', 'headers 200', 'complete']);
    expect(rec.statusText).toBe('Fine');
    expect(rec.rawHeaders!.every((b) => Buffer.isBuffer(b))).toBe(true);
    expect(pairs(rec.rawHeaders!)).toContainEqual(['x-one', 'a']);
    expect(Buffer.concat(rec.body).toString()).toBe('hello legacy');
    expect(pairs(rec.rawTrailers!)).toEqual([['x-sum', '42']]);
  });

  it('returning false from onData pauses until resume() is called', async () => {
    const total = 64 * 1024 * 1024; // 64 MiB
    const progress = new BodyProgress();
    const srv = await serve(backpressuredBody(total, 'z', progress));
    const client = track(new Client(srv.origin));
    let received = 0;
    let pausedAt = -1;
    let pausedNow!: () => void;
    const paused = new Promise<void>((r) => (pausedNow = r));
    const [handler, rec] = legacy({
      onData(r, c) {
        received += c.length;
        r.body.length = 0; // don't keep 64 MiB around
        if (pausedAt === -1 && received > 1024 * 1024) {
          pausedAt = received;
          pausedNow();
          return false;
        }
        return true;
      },
    });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    // Wait for the pause and for the server to feel it, then show nothing more arrives.
    await paused;
    await serverStaysBlocked(progress);
    const settled = received;
    await serverStaysBlocked(progress);
    expect(received).toBe(settled);
    expect(received).toBeLessThan(total);
    rec.resume!();
    await rec.done;
    expect(rec.events.at(-1)).toBe('complete');
    expect(received).toBe(total);
  });

  it('returning false from onHeaders pauses the body until resume()', async () => {
    const total = 64 * 1024 * 1024; // 64 MiB
    const progress = new BodyProgress();
    const srv = await serve(backpressuredBody(total, 'h', progress));
    const client = track(new Client(srv.origin));
    let received = 0;
    let headersNow!: () => void;
    const headers = new Promise<void>((r) => (headersNow = r));
    const [handler, rec] = legacy({
      onHeaders: () => (headersNow(), false),
      onData(r, c) {
        received += c.length;
        r.body.length = 0;
      },
    });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await headers;
    // What the engine had already decoded may still land; after that, nothing until resume().
    await serverStaysBlocked(progress);
    const settled = received;
    await serverStaysBlocked(progress);
    expect(received).toBe(settled);
    expect(received).toBeLessThan(total);
    expect(rec.events).toEqual(['connect', 'headers 200']);
    rec.resume!();
    await rec.done;
    expect(rec.events.at(-1)).toBe('complete');
    expect(received).toBe(total);
  });

  it('the abort given to onConnect fails the request through onError', async () => {
    const srv = await serve((_req, res) => res.end('never'));
    const client = track(new Client(srv.origin));
    const [handler, rec] = legacy({ onConnect: (r) => r.abort!() });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.error).toBeInstanceOf(errors.RequestAbortedError);
    const reason = new Error('mine');
    const [h2, rec2] = legacy({ onConnect: (r) => r.abort!(reason) });
    client.dispatch({ path: '/', method: 'GET' }, h2);
    await rec2.done;
    expect(rec2.error).toBe(reason);
  });

  it('a connection failure reaches onError', async () => {
    const client = track(new Client('http://127.0.0.1:1'));
    const [handler, rec] = legacy();
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.error).toMatchObject({ constructor: Error, code: 'ECONNREFUSED' });
  });

  it('controller-based handlers pass through the adapter untouched', () => {
    const modern: DispatchHandler = { onRequestStart() {}, onResponseError() {} };
    expect(isLegacyHandler(modern)).toBe(false);
    expect(toControllerHandler(modern)).toBe(modern);
  });
});

describe('legacy handlers on mock dispatchers', () => {
  it('MockAgent and MockPool answer a legacy handler', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    cleanup.push(() => agent.close());
    const pool = agent.get('http://mock.test');
    pool.intercept({ path: '/m' }).reply(201, 'mocked', { headers: { 'x-m': '1' } }).times(2);
    for (const d of [agent, pool] as Dispatcher[]) {
      const [handler, rec] = legacy();
      d.dispatch({ origin: 'http://mock.test', path: '/m', method: 'GET' }, handler);
      await rec.done;
      expect(rec.events).toEqual(['connect', 'headers 201', 'complete']);
      expect(pairs(rec.rawHeaders!)).toContainEqual(['x-m', '1']);
      expect(Buffer.concat(rec.body).toString()).toBe('mocked');
    }
  });
});

describe('Dispatcher1Wrapper', () => {
  it('drives a controller-only dispatcher for a legacy consumer', async () => {
    const srv = await serve((req, res) => res.end(`wrapped ${req.url}`));
    const client = track(new Client(srv.origin));
    // An interceptor that only speaks the controller interface (it reads onResponseStart).
    const seen: number[] = [];
    const controllerOnly = client.compose((dispatch: DispatchFn) => (opts: DispatchOptions, handler: DispatchHandler) => {
      if (typeof handler.onResponseStart !== 'function') throw new Error('expected a controller-based handler');
      return dispatch(opts, {
        ...handler,
        onRequestStart: (c, ctx) => handler.onRequestStart!(c, ctx),
        onResponseStart: (c, s, h, m) => {
          seen.push(s);
          handler.onResponseStart!(c, s, h, m);
        },
        onResponseData: (c, d) => handler.onResponseData!(c, d),
        onResponseEnd: (c, t) => handler.onResponseEnd!(c, t),
        onResponseError: (c, e) => handler.onResponseError!(c, e),
      });
    });
    const wrapper = new Dispatcher1Wrapper(controllerOnly);
    const [handler, rec] = legacy();
    wrapper.dispatch({ path: '/w', method: 'GET' }, handler);
    await rec.done;
    expect(seen).toEqual([200]);
    expect(rec.events).toEqual(['connect', 'headers 200', 'complete']);
    expect(Buffer.concat(rec.body).toString()).toBe('wrapped /w');
    // The ordinary API still works through the wrapper.
    const res = await wrapper.request({ path: '/r', method: 'GET' });
    expect(await res.body.text()).toBe('wrapped /r');
  });

  it('rejects a non-dispatcher', () => {
    expect(() => new Dispatcher1Wrapper({} as never)).toThrow(errors.InvalidArgumentError);
  });

  it('serves Node’s own fetch when installed at its legacy global slot', async () => {
    const srv = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        res.setHeader('content-type', 'text/plain');
        res.setHeader('x-engine', 'ferro');
        res.end(`${req.method} ${req.url} ${body}`);
      });
    });
    const client = track(new Client(srv.origin));
    const served: string[] = [];
    const counting = client.compose((dispatch: DispatchFn) => (opts, handler) => {
      served.push(String(opts.path));
      return dispatch(opts, handler);
    });
    const key = Symbol.for('undici.globalDispatcher.1');
    const previous = Reflect.getOwnPropertyDescriptor(globalThis, key);
    // Node's undici defines the slot writable but non-configurable once its fetch has loaded.
    const install = (value: unknown): void => {
      if (previous?.configurable === false) Reflect.set(globalThis, key, value);
      else Object.defineProperty(globalThis, key, { value, writable: true, configurable: true });
    };
    install(new Dispatcher1Wrapper(counting));
    cleanup.push(() => {
      if (previous === undefined) Reflect.deleteProperty(globalThis, key);
      else install(previous.value);
    });
    const res = await fetch(`${srv.origin}/node-fetch?q=1`, { method: 'POST', body: 'sent' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-engine')).toBe('ferro');
    expect(await res.text()).toBe('POST /node-fetch?q=1 sent');
    expect(served).toEqual(['/node-fetch?q=1']);
  });
});

describe('legacy handlers on Agent', () => {
  it('a legacy handler hears maxOrigins being reached through onError', async () => {
    const srv = await httpServer((req, res) => res.end('ok'));
    const agent = new Agent({ maxOrigins: 1 });
    try {
      const first = await agent.request({ origin: srv.origin, path: '/', method: 'GET' });
      await first.body.dump();
      const err = await new Promise<Error>((resolve) => {
        agent.dispatch(
          { origin: 'http://127.0.0.2:1', path: '/', method: 'GET' },
          {
            onConnect() {},
            onHeaders: () => true,
            onData: () => true,
            onComplete() {},
            onError: resolve,
          },
        );
      });
      expect(err).toBeInstanceOf(errors.MaxOriginsReachedError);
    } finally {
      await agent.close();
      await srv.close();
    }
  });
});
