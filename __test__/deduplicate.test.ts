// The deduplicate interceptor: identical concurrent requests share one origin request; each
// caller can pause or abort on its own; the pending-requests diagnostics channel.
import { describe, expect, it } from 'vitest';
import diagnosticsChannel from 'node:diagnostics_channel';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Agent, errors, interceptors } from '../ts/index.js';
import type { DeduplicateInterceptorOptions, DispatchController, PendingRequestsMessage } from '../ts/index.js';
import { countingOrigin, type Route } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

async function setup(route: Route, opts: DeduplicateInterceptorOptions = {}) {
  const origin = track(await countingOrigin(route));
  const agent = track(new Agent().compose(interceptors.deduplicate(opts)));
  const get = (headers: Record<string, string> = {}, signal?: AbortSignal) =>
    agent.request({ origin: origin.origin, path: '/thing', method: 'GET', headers, signal });
  return { origin, agent, get };
}

/** A route that holds every response until `release()`; `responses` resolves as requests arrive. */
function held(body: Buffer) {
  const waiting: ServerResponse[] = [];
  let arrived: () => void = () => {};
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const route: Route = (_req, res) => {
    waiting.push(res);
    arrived();
  };
  const release = (): void => {
    for (const res of waiting.splice(0)) {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    }
  };
  return { route, first, release, waiting };
}

describe('deduplicate', () => {
  it('sends five concurrent identical requests as one and gives all five the same bytes', async () => {
    const body = randomBytes(256 * 1024);
    const h = held(body);
    const { origin, get } = await setup(h.route);
    const calls = Array.from({ length: 5 }, () => get());
    await h.first;
    h.release();
    const results = await Promise.all(calls);
    const bodies = await Promise.all(results.map(async (r) => Buffer.from(await r.body.arrayBuffer())));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    for (const b of bodies) expect(b.equals(body)).toBe(true);
    expect(origin.hits).toBe(1);
  });

  it('aborting the first caller detaches only it', async () => {
    const body = Buffer.from('shared answer');
    const h = held(body);
    const { origin, get } = await setup(h.route);
    const ac = new AbortController();
    const first = get({}, ac.signal);
    const others = [get(), get()];
    await h.first;
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    await expect(first).rejects.toBeInstanceOf(errors.RequestAbortedError);
    h.release();
    for (const r of await Promise.all(others)) expect(await r.body.text()).toBe('shared answer');
    expect(origin.hits).toBe(1);
  });

  it('aborting a later caller detaches only it', async () => {
    const h = held(Buffer.from('answer'));
    const { origin, get } = await setup(h.route);
    const ac = new AbortController();
    const first = get();
    const later = get({}, ac.signal);
    await h.first;
    ac.abort();
    await expect(later).rejects.toBeInstanceOf(errors.RequestAbortedError);
    h.release();
    expect(await (await first).body.text()).toBe('answer');
    expect(origin.hits).toBe(1);
  });

  it('cancels the shared request at the origin once every caller has aborted', async () => {
    const h = held(Buffer.from('never read'));
    const { get } = await setup(h.route);
    const a = new AbortController();
    const b = new AbortController();
    const calls = [get({}, a.signal), get({}, b.signal)];
    await h.first;
    const closed = once(h.waiting[0]!, 'close');
    a.abort();
    b.abort();
    for (const c of calls) await expect(c).rejects.toBeInstanceOf(errors.RequestAbortedError);
    await closed;
  });

  it('fails a paused caller past maxBufferSize with an abort error while the others read on', async () => {
    const body = randomBytes(512 * 1024);
    const h = held(body);
    const { origin, agent, get } = await setup(h.route, { maxBufferSize: 64 * 1024 });
    const reader = get();
    const failed = new Promise<Error>((resolve) => {
      agent.dispatch(
        { origin: origin.origin, path: '/thing', method: 'GET' },
        {
          onResponseStart(controller: DispatchController) {
            controller.pause();
          },
          onResponseError(_c: DispatchController, err: Error) {
            resolve(err);
          },
        },
      );
    });
    await h.first;
    h.release();
    const res = await reader;
    expect(Buffer.from(await res.body.arrayBuffer()).equals(body)).toBe(true);
    const err = await failed;
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect(err).toMatchObject({
      code: 'UND_ERR_ABORTED',
      message: 'Deduplicated waiting handler exceeded maxBufferSize (65536 bytes) while paused',
    });
    expect(origin.hits).toBe(1);
  });

  it('a single slow caller is held back by backpressure, not failed by maxBufferSize', async () => {
    const body = randomBytes(1024 * 1024);
    const h = held(body);
    const { get } = await setup(h.route, { maxBufferSize: 1024 });
    const call = get();
    await h.first;
    h.release();
    const res = await call;
    expect(Buffer.from(await res.body.arrayBuffer()).equals(body)).toBe(true);
  });

  it('identity: excluded headers are ignored, different headers are not, skip headers opt out', async () => {
    const h = held(Buffer.from('x'));
    const { origin, get } = await setup(h.route, { excludeHeaderNames: ['X-Request-Id'], skipHeaderNames: ['X-No-Dedupe'] });
    const calls = [
      get({ 'x-request-id': '1' }),
      get({ 'x-request-id': '2' }),
      get({ accept: 'text/plain' }),
      get({ 'x-no-dedupe': '1' }),
      get({ 'x-no-dedupe': '1' }),
    ];
    await h.first;
    await new Promise<void>((resolve) => {
      const check = (): void => (origin.hits === 4 ? resolve() : void origin.nextHit().then(check));
      check();
    });
    h.release();
    for (const r of await Promise.all(calls)) expect(await r.body.text()).toBe('x');
    expect(origin.hits).toBe(4);
  });

  it('publishes added, joined and removed on lib:request:pending-requests', async () => {
    const h = held(Buffer.from('x'));
    const { get, origin } = await setup(h.route);
    const messages: PendingRequestsMessage[] = [];
    const listener = (m: unknown): void => void messages.push(m as PendingRequestsMessage);
    diagnosticsChannel.subscribe('lib:request:pending-requests', listener);
    try {
      const calls = [get(), get(), get()];
      await h.first;
      h.release();
      for (const r of await Promise.all(calls)) await r.body.text();
    } finally {
      diagnosticsChannel.unsubscribe('lib:request:pending-requests', listener);
    }
    expect(messages.map((m) => [m.type, m.size, m.callers])).toEqual([
      ['added', 1, 1],
      ['joined', 1, 2],
      ['joined', 1, 3],
      ['removed', 0, 3],
    ]);
    const key = JSON.parse(messages[0]!.key) as unknown[];
    expect(key.slice(0, 3)).toEqual([origin.origin, 'GET', '/thing']);
    expect(new Set(messages.map((m) => m.key)).size).toBe(1);
  });

  it('composes with cache in either order', async () => {
    for (const order of ['cache-outside', 'dedupe-outside'] as const) {
      const origin = track(
        await countingOrigin((_req, res, hit) => {
          res.writeHead(200, { 'cache-control': 'max-age=60' });
          res.end(`hit ${hit}`);
        }),
      );
      const chain =
        order === 'cache-outside'
          ? [interceptors.deduplicate(), interceptors.cache()]
          : [interceptors.cache(), interceptors.deduplicate()];
      const agent = track(new Agent().compose(chain));
      const get = async () => (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text();
      expect(await Promise.all([get(), get(), get(), get(), get()])).toEqual(Array(5).fill('hit 1'));
      expect(await get()).toBe('hit 1');
      expect(origin.hits).toBe(1);
    }
  });

  it("rejects bad options with undici's TypeErrors, word for word", () => {
    const cases: [unknown, string][] = [
      [{ methods: ['POST'] }, 'expected opts.methods to only contain safe HTTP methods, got POST'],
      [{ methods: 'GET' }, 'expected opts.methods to be an array, got string'],
      [{ maxBufferSize: 0 }, 'expected opts.maxBufferSize to be a positive finite number, got 0'],
      [{ maxBufferSize: -1 }, 'expected opts.maxBufferSize to be a positive finite number, got -1'],
      [{ skipHeaderNames: 'x' }, 'expected opts.skipHeaderNames to be an array, got string'],
      [{ excludeHeaderNames: 'x' }, 'expected opts.excludeHeaderNames to be an array, got string'],
      [null, 'expected type of opts to be an Object, got null'],
    ];
    for (const [opts, message] of cases) {
      const make = () => interceptors.deduplicate(opts as DeduplicateInterceptorOptions);
      expect(make).toThrow(TypeError);
      expect(make).toThrow(message);
    }
    // An empty list is allowed, as in undici: nothing is deduplicated.
    expect(() => interceptors.deduplicate({ methods: [] })).not.toThrow();
  });
});
