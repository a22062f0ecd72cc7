// The interceptors through every dispatcher kind and every API: a redirect (and a retry) seen
// through request, stream, pipeline, dispatch, fetch and the global dispatcher; on Client, Pool,
// Agent, BalancedPool, MockAgent and SnapshotAgent; with legacy handlers; and composed together.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pipeline as pipe } from 'node:stream/promises';
import {
  Agent,
  BalancedPool,
  Client,
  DecoratorHandler,
  errors,
  fetch,
  getGlobalDispatcher,
  installGlobalFetch,
  interceptors,
  MockAgent,
  Pool,
  RedirectHandler,
  RetryHandler,
  request,
  setGlobalDispatcher,
  SnapshotAgent,
  type Dispatcher,
  type DispatchController,
  type DispatchHandler,
  type DispatchOptions,
  type IncomingHeaders,
} from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track, push } = useCleanup();

/** /start redirects to /end; /flaky fails with 503 on its first request; /end answers. */
async function server() {
  let flaky = 0;
  const s = track(
    await httpServer((req, res) => {
      if (req.url === '/start') return res.writeHead(302, { location: '/end' }).end('moving');
      if (req.url === '/flaky' && flaky++ === 0) return res.writeHead(503).end('busy');
      if (req.url === '/upgrade') return res.end('no upgrade here');
      res.setHeader('content-type', 'text/plain');
      res.end(`at ${req.url}`);
    }),
  );
  return s;
}

const redirect = () => interceptors.redirect({ maxRedirections: 2 });

describe('through every API', () => {
  it('request, stream and dispatch follow the redirect; pipeline (its body live) gets the 302', async () => {
    const s = await server();
    const d = track(new Agent().compose(redirect()));
    const o = { origin: s.origin, path: '/start', method: 'GET' } as const;

    const r = await d.request(o);
    expect(await r.body.text()).toBe('at /end');

    let streamed = '';
    await d.stream(o, () => new Writable({ write: (c: Buffer, _e, cb) => ((streamed += c), cb()) }));
    expect(streamed).toBe('at /end');

    // A pipeline's request side cannot be sent again, so its redirect is not followed (undici).
    let piped = '';
    await pipe(
      d.pipeline(o, ({ body }) => body),
      new Writable({ write: (c: Buffer, _e, cb) => ((piped += c), cb()) }),
    );
    expect(piped).toBe('moving');

    const seen = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let status = 0;
      let body = '';
      d.dispatch(o, {
        onRequestStart() {},
        onResponseStart(_c, code) {
          status = code;
        },
        onResponseData(_c, chunk) {
          body += chunk;
        },
        onResponseEnd: () => resolve({ status, body }),
        onResponseError: (_c, err) => reject(err),
      });
    });
    expect(seen).toEqual({ status: 200, body: 'at /end' });
  });

  it('fetch with a composed dispatcher: the interceptor follows before fetch sees a 3xx', async () => {
    const s = await server();
    const d = track(new Agent().compose(redirect()));
    const res = await fetch(`${s.origin}/start`, { dispatcher: d, redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('at /end');
  });

  it("Node's own fetch, installed on a composed dispatcher (legacy handlers through the interceptors)", async () => {
    const s = await server();
    const uninstall = installGlobalFetch(track(new Agent().compose(interceptors.retry({ minTimeout: 1 }))));
    push(async () => uninstall());
    const res = await globalThis.fetch(`${s.origin}/flaky`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('at /flaky');
  });

  it('the global dispatcher and the top-level request()', async () => {
    const s = await server();
    const before = getGlobalDispatcher();
    push(async () => setGlobalDispatcher(before));
    setGlobalDispatcher(track(new Agent().compose(redirect(), interceptors.retry({ minTimeout: 1 }))));
    const r = await request(`${s.origin}/start`);
    expect(await r.body.text()).toBe('at /end');
    const f = await request(`${s.origin}/flaky`);
    expect(await f.body.text()).toBe('at /flaky');
  });

  it('upgrade and connect pass through composed interceptors', async () => {
    const s = await server();
    s.server.on('upgrade', (_req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.on('data', (d: Buffer) => socket.write(d));
    });
    const d = track(new Agent().compose(redirect(), interceptors.retry(), interceptors.dump()));
    const { socket } = await d.upgrade({ origin: s.origin, path: '/', protocol: 'echo' } as never);
    socket.write('ping');
    const [echo] = (await (async () => {
      for await (const chunk of socket) return [String(chunk)];
      return [''];
    })()) as string[];
    expect(echo).toBe('ping');
    socket.destroy();

    s.server.on('connect', (_req, client) => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.on('data', (d: Buffer) => client.write(`tunnel:${d}`));
    });
    const tunnel = await d.connect({ origin: s.origin, path: 'example.test:443' } as never);
    expect(tunnel.statusCode).toBe(200);
    tunnel.socket.write('hi');
    for await (const chunk of tunnel.socket) {
      expect(String(chunk)).toBe('tunnel:hi');
      break;
    }
    tunnel.socket.destroy();
  });
});

describe('on every dispatcher', () => {
  const cases: [string, (origin: string) => Dispatcher][] = [
    ['Client', (o) => new Client(o)],
    ['Pool', (o) => new Pool(o)],
    ['Agent', () => new Agent()],
    ['BalancedPool', (o) => new BalancedPool([o])],
  ];
  for (const [name, make] of cases) {
    it(`${name}: retry then redirect`, async () => {
      const s = await server();
      const d = track(make(s.origin).compose(redirect(), interceptors.retry({ minTimeout: 1 })));
      const r = await d.request({ origin: s.origin, path: '/flaky', method: 'GET' });
      expect(await r.body.text()).toBe('at /flaky');
      const r2 = await d.request({ origin: s.origin, path: '/start', method: 'GET' });
      expect(await r2.body.text()).toBe('at /end');
    });
  }

  it('MockAgent: mocked redirects, retries and error statuses', async () => {
    const mock = track(new MockAgent());
    mock.disableNetConnect();
    const pool = mock.get('http://mocked.test');
    pool.intercept({ path: '/start' }).reply(301, '', { headers: { location: '/end' } });
    pool.intercept({ path: '/end' }).reply(200, 'mocked end');
    pool.intercept({ path: '/flaky' }).reply(500, 'no');
    pool.intercept({ path: '/flaky' }).reply(200, 'mocked ok');
    pool.intercept({ path: '/missing' }).reply(404, { why: 'gone' }, { headers: { 'content-type': 'application/json' } });
    const d = mock.compose(redirect(), interceptors.retry({ minTimeout: 1 }), interceptors.responseError());
    const o = { origin: 'http://mocked.test', method: 'GET' } as const;
    expect(await (await d.request({ ...o, path: '/start' })).body.text()).toBe('mocked end');
    expect(await (await d.request({ ...o, path: '/flaky' })).body.text()).toBe('mocked ok');
    const err = await d.request({ ...o, path: '/missing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ResponseError);
    expect((err as InstanceType<typeof errors.ResponseError>).body).toEqual({ why: 'gone' });
  });

  it('MockAgent: a body factory is resolved for each attempt', async () => {
    const mock = track(new MockAgent());
    mock.disableNetConnect();
    const pool = mock.get('http://mocked.test');
    pool.intercept({ path: '/up', method: 'PUT', body: 'payload' }).reply(307, '', { headers: { location: '/up2' } });
    pool.intercept({ path: '/up2', method: 'PUT', body: 'payload' }).reply(200, 'stored');
    const d = mock.compose(redirect());
    const res = await d.request({
      origin: 'http://mocked.test',
      path: '/up',
      method: 'PUT',
      body: () => PassThrough.from(['pay', 'load']),
    });
    expect(await res.body.text()).toBe('stored');
  });

  it('SnapshotAgent records the final response of a followed redirect', async () => {
    const s = await server();
    const dir = mkdtempSync(join(tmpdir(), 'ferro-interceptors-'));
    push(async () => rmSync(dir, { recursive: true, force: true }));
    const agent = track(new SnapshotAgent({ mode: 'record', snapshotPath: join(dir, 's.json') }));
    const d = agent.compose(redirect());
    const r = await d.request({ origin: s.origin, path: '/start', method: 'GET' });
    expect(await r.body.text()).toBe('at /end');
    expect(agent.getRecorder().size()).toBe(2);
  });
});

describe('handlers', () => {
  it('a legacy handler works behind an interceptor', async () => {
    const s = await server();
    const d = track(new Agent().compose(redirect()));
    const got = await new Promise<{ status: number; body: string; connected: boolean }>((resolve, reject) => {
      let status = 0;
      let body = '';
      let connected = false;
      d.dispatch({ origin: s.origin, path: '/start', method: 'GET' }, {
        onConnect: () => void (connected = true),
        onHeaders: (code: number) => void (status = code),
        onData: (chunk: Buffer) => void (body += chunk),
        onComplete: () => resolve({ status, body, connected }),
        onError: reject,
      });
    });
    expect(got).toEqual({ status: 200, body: 'at /end', connected: true });
  });

  it('DecoratorHandler is the base of a custom interceptor', async () => {
    const s = await server();
    class Upper extends DecoratorHandler {
      override onResponseData(controller: DispatchController, chunk: Buffer): void {
        super.onResponseData(controller, Buffer.from(chunk.toString().toUpperCase()));
      }
    }
    const upper = (dispatch: (o: DispatchOptions, h: DispatchHandler) => boolean) => (o: DispatchOptions, h: DispatchHandler) =>
      dispatch(o, new Upper(h));
    const d = track(new Agent().compose(upper, redirect()));
    expect(await (await d.request({ origin: s.origin, path: '/start', method: 'GET' })).body.text()).toBe('AT /END');
    expect(() => new DecoratorHandler(null as never)).toThrow(errors.InvalidArgumentError);
  });

  it('RedirectHandler and RetryHandler can be used directly, as in undici', async () => {
    const s = await server();
    const agent = track(new Agent());
    const dispatch = agent.dispatch.bind(agent);
    const collect = (resolve: (v: string) => void, reject: (e: Error) => void): DispatchHandler => {
      let body = '';
      return {
        onResponseStart(_c: DispatchController, _s: number, _h: IncomingHeaders) {},
        onResponseData: (_c, chunk) => void (body += chunk),
        onResponseEnd: () => resolve(body),
        onResponseError: (_c, err) => reject(err),
      };
    };
    const viaRedirect = await new Promise<string>((resolve, reject) => {
      const opts = { origin: s.origin, path: '/start', method: 'GET' };
      dispatch(opts, new RedirectHandler(dispatch, 1, opts, collect(resolve, reject)));
    });
    expect(viaRedirect).toBe('at /end');
    const viaRetry = await new Promise<string>((resolve, reject) => {
      const opts = { origin: s.origin, path: '/flaky', method: 'GET', retryOptions: { minTimeout: 1 } };
      dispatch(opts, new RetryHandler(opts, { dispatch, handler: collect(resolve, reject) }));
    });
    expect(viaRetry).toBe('at /flaky');
  });
});

describe('body factories without interceptors', () => {
  it('a Client calls the factory once and streams what it returns', async () => {
    const s = track(
      await httpServer(async (req, res) => {
        let body = '';
        for await (const chunk of req) body += chunk;
        res.end(`got ${body}`);
      }),
    );
    const client = track(new Client(s.origin));
    let calls = 0;
    const res = await client.request({ path: '/', method: 'POST', body: () => (calls++, PassThrough.from(['a', 'b'])) });
    expect(await res.body.text()).toBe('got ab');
    expect(calls).toBe(1);
  });

  it('a factory must return a body, not a promise', async () => {
    const s = await server();
    const client = track(new Client(s.origin));
    const err = await client
      .request({ path: '/', method: 'POST', body: (() => Promise.resolve('x')) as never })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
  });
});
