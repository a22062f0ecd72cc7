// The cache interceptor through every API (request, stream, dispatch, fetch on the global
// dispatcher), with custom stores (async, streamed bodies, failing ones), and its input checks.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { Agent, Pool, cacheStores, errors, fetch, getGlobalDispatcher, interceptors, setGlobalDispatcher } from '../ts/index.js';
import type { CacheKey, CacheStore, CacheValue, DispatchController, GetResult } from '../ts/index.js';
import { countingOrigin, type Route } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const { track } = cleanup;

const cacheable: Route = (_req, res, hit) => {
  res.writeHead(200, { 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
  res.end(`response ${hit}`);
};

/** A store keeping bodies as strings behind promises and handing them back as streams. */
class AsyncStore implements CacheStore {
  readonly entries = new Map<string, { value: CacheValue; body: string }>();
  gets = 0;
  async get(key: CacheKey): Promise<GetResult | undefined> {
    this.gets++;
    const hit = this.entries.get(`${key.method} ${key.origin}${key.path}`);
    if (hit === undefined) return undefined;
    return { ...hit.value, body: Readable.from([Buffer.from(hit.body)]) };
  }
  createWriteStream(key: CacheKey, value: CacheValue): Writable {
    const chunks: Buffer[] = [];
    return new Writable({
      write: (chunk: Buffer, _e, cb) => void (chunks.push(chunk), cb()),
      final: (cb) => {
        this.entries.set(`${key.method} ${key.origin}${key.path}`, { value, body: Buffer.concat(chunks).toString() });
        cb();
      },
    });
  }
  async delete(key: CacheKey): Promise<void> {
    this.entries.delete(`GET ${key.origin}${key.path}`);
  }
}

describe('cache interceptor across APIs', () => {
  it('serves stream() from the cache', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache()));
    const read = async (): Promise<string> => {
      const chunks: Buffer[] = [];
      await agent.stream({ origin: origin.origin, path: '/', method: 'GET' }, () =>
        new Writable({ write: (c: Buffer, _e, cb) => void (chunks.push(c), cb()) }),
      );
      return Buffer.concat(chunks).toString();
    };
    expect(await read()).toBe('response 1');
    expect(await read()).toBe('response 1');
    expect(origin.hits).toBe(1);
  });

  it('serves pipeline() from the cache', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache()));
    const read = async (): Promise<string> => {
      const chunks: Buffer[] = [];
      const duplex = agent.pipeline({ origin: origin.origin, path: '/', method: 'GET' }, ({ body }) => body);
      duplex.end();
      for await (const chunk of duplex) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    expect(await read()).toBe('response 1');
    expect(await read()).toBe('response 1');
    expect(origin.hits).toBe(1);
  });

  it('serves dispatch() from the cache, honouring pause and resume', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache()));
    const viaDispatch = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        let status = 0;
        const chunks: Buffer[] = [];
        agent.dispatch(
          { origin: origin.origin, path: '/', method: 'GET' },
          {
            onResponseStart(controller: DispatchController, statusCode: number) {
              status = statusCode;
              controller.pause();
              setImmediate(() => controller.resume());
            },
            onResponseData: (_c: DispatchController, chunk: Buffer) => void chunks.push(chunk),
            onResponseEnd: () => resolve({ status, body: Buffer.concat(chunks).toString() }),
            onResponseError: (_c: DispatchController, err: Error) => reject(err),
          },
        );
      });
    expect(await viaDispatch()).toEqual({ status: 200, body: 'response 1' });
    expect(await viaDispatch()).toEqual({ status: 200, body: 'response 1' });
    expect(origin.hits).toBe(1);
  });

  it('works for fetch with the cache installed on the global dispatcher', async () => {
    const origin = track(await countingOrigin(cacheable));
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(track(new Agent().compose(interceptors.cache())));
    cleanup.push(async () => setGlobalDispatcher(previous));
    const first = await fetch(`${origin.origin}/f`);
    expect(await first.text()).toBe('response 1');
    const second = await fetch(`${origin.origin}/f`);
    expect(await second.text()).toBe('response 1');
    expect(second.headers.get('age')).toBe('0');
    expect(origin.hits).toBe(1);
  });

  it('works on a Pool for requests that name no origin (compose passes the pool\'s own)', async () => {
    const origin = track(await countingOrigin(cacheable));
    const pool = track(new Pool(origin.origin).compose(interceptors.cache(), interceptors.deduplicate()));
    const get = async () => (await pool.request({ path: '/p', method: 'GET' })).body.text();
    expect(await Promise.all([get(), get()])).toEqual(['response 1', 'response 1']);
    expect(await get()).toBe('response 1');
    expect(origin.hits).toBe(1);
  });

  it('a caller chaining requests from each cache hit does not starve timers or I/O', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache()));
    await (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text();
    let hits = 0;
    let running = true;
    const next = (): void => {
      agent.dispatch(
        { origin: origin.origin, path: '/', method: 'GET' },
        { onResponseEnd: () => void (hits++, running && next()), onResponseError: () => {} },
      );
    };
    next();
    // Before the fix, hits were served in microtasks: this timer never fired.
    await new Promise((resolve) => setTimeout(resolve, 20));
    running = false;
    expect(hits).toBeGreaterThan(0);
    expect(origin.hits).toBe(1);
  });

  it('a response from the cache can be aborted like a live one', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache()));
    await (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text();
    const ac = new AbortController();
    const pending = agent.request({ origin: origin.origin, path: '/', method: 'GET', signal: ac.signal });
    ac.abort();
    await expect(pending).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(origin.hits).toBe(1);
  });

  it('serves legacy (Dispatcher 1) handlers, through both interceptors', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.deduplicate(), interceptors.cache()));
    const legacy = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        let status = 0;
        const chunks: Buffer[] = [];
        agent.dispatch(
          { origin: origin.origin, path: '/legacy', method: 'GET' },
          {
            onConnect: () => {},
            onHeaders: (statusCode: number) => void (status = statusCode),
            onData: (chunk: Buffer) => void chunks.push(chunk),
            onComplete: () => resolve({ status, body: Buffer.concat(chunks).toString() }),
            onError: reject,
          },
        );
      });
    expect(await Promise.all([legacy(), legacy()])).toEqual([
      { status: 200, body: 'response 1' },
      { status: 200, body: 'response 1' },
    ]);
    expect(await legacy()).toEqual({ status: 200, body: 'response 1' });
    expect(origin.hits).toBe(1);
  });

  it('caches HEAD when asked to, separately from GET', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ methods: ['GET', 'HEAD'] })));
    for (const method of ['HEAD', 'HEAD', 'GET', 'GET']) {
      const res = await agent.request({ origin: origin.origin, path: '/', method });
      await res.body.text();
    }
    expect(origin.seen.map((s) => s.method)).toEqual(['HEAD', 'GET']);
  });

  it('never stores a truncated body', async () => {
    const origin = track(
      await countingOrigin((req, res) => {
        res.writeHead(200, { 'cache-control': 'max-age=60', 'content-length': '100' });
        res.write('only part');
        setImmediate(() => req.socket.destroy());
      }),
    );
    const agent = track(new Agent().compose(interceptors.cache()));
    const get = async () => (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text();
    const truncated = { name: 'SocketError', code: 'UND_ERR_SOCKET', message: 'other side closed' };
    await expect(get()).rejects.toMatchObject(truncated);
    await expect(get()).rejects.toMatchObject(truncated);
    expect(origin.hits).toBe(2);
  });
});

describe('custom stores', () => {
  it('works with an asynchronous store that returns bodies as streams, and invalidates through it', async () => {
    const origin = track(await countingOrigin(cacheable));
    const store = new AsyncStore();
    const agent = track(new Agent().compose(interceptors.cache({ store })));
    const get = async (method = 'GET') => (await agent.request({ origin: origin.origin, path: '/c', method })).body.text();
    expect(await get()).toBe('response 1');
    expect(await get()).toBe('response 1');
    expect(store.gets).toBe(2);
    expect(origin.hits).toBe(1);
    await get('DELETE');
    expect(await get()).toBe('response 3');
  });

  it('a store that throws or rejects costs a warning and a miss, never a failed request', async () => {
    const origin = track(await countingOrigin(cacheable));
    const broken: CacheStore = {
      get: () => Promise.reject(new Error('store offline')),
      createWriteStream: () => {
        throw new Error('store is read-only');
      },
      delete: () => {
        throw new Error('store offline');
      },
    };
    const warning = once(process, 'warning');
    const agent = track(new Agent().compose(interceptors.cache({ store: broken })));
    const res = await agent.request({ origin: origin.origin, path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('response 1');
    const [w] = (await warning) as [Error];
    expect(w.name).toBe('CacheStoreWarning');
    expect(w.message).toMatch(/store offline|read-only/);
  });

  it('rejects bad options with InvalidArgumentError', () => {
    const bad: unknown[] = [
      { store: {} },
      { store: { get() {}, createWriteStream() {} } },
      { store: null },
    ];
    for (const opts of bad) {
      expect(() => interceptors.cache(opts as never), JSON.stringify(opts)).toThrow(errors.InvalidArgumentError);
    }
    // The other options throw undici's plain TypeError (compat-argument-messages.test.ts has the words).
    const badTyped: unknown[] = [{ methods: ['POST'] }, { methods: [] }, { methods: 'GET' }, { cacheByDefault: -1 }, { type: 'public' }, { origins: [42] }, null];
    for (const opts of badTyped) {
      expect(() => interceptors.cache(opts as never), JSON.stringify(opts)).toThrow(TypeError);
    }
    expect(() => interceptors.cache({ store: new cacheStores.MemoryCacheStore(), methods: ['GET', 'HEAD'] })).not.toThrow();
  });

  it('only caches the listed origins', async () => {
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ origins: ['http://elsewhere.example'] })));
    for (let i = 0; i < 2; i++) await (await agent.request({ origin: origin.origin, path: '/', method: 'GET' })).body.text();
    expect(origin.hits).toBe(2);
  });
});
