// RoundRobinPool: Clients made on demand up to `connections`, requests given to them in turn.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { once } from 'node:events';
import { Client, Pool, RoundRobinPool, errors } from '../ts/index.js';
import type { Dispatcher } from '../ts/index.js';
import { engineCounts } from '../ts/native/engine.js';
import { Cleanup, ok, scriptServer, type RawRequest } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('RoundRobinPool', () => {
  it('opens up to `connections` Clients, queues beyond them, then takes turns', async () => {
    const held: RawRequest[] = [];
    let hold = true;
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (hold) held.push(req);
        else req.conn.socket.write(ok(String(req.conn.index)));
      }),
    );
    const pool = cleanup.add(new RoundRobinPool(srv.origin, { connections: 2 }));
    const first = [pool.request({ path: '/1', method: 'GET' }), pool.request({ path: '/2', method: 'GET' })];
    await srv.request(1);
    expect(srv.conns.length).toBe(2);
    expect(pool.stats.pending).toBe(0);
    // Both Clients are busy and no third may be made: the request waits in the pool.
    const third = pool.request({ path: '/3', method: 'GET' });
    expect(pool.stats.queued).toBe(1);
    const drained = once(pool, 'drain');
    hold = false;
    for (const r of held) r.conn.socket.write(ok(String(r.conn.index)));
    for (const p of [...first, third]) await (await p).body.text();
    await drained;
    expect(srv.conns.length).toBe(2);
    // One request at a time now: the Clients take turns.
    const served: string[] = [];
    for (let i = 0; i < 4; i++) served.push(await (await pool.request({ path: '/', method: 'GET' })).body.text());
    expect(new Set(served.slice(0, 2)).size).toBe(2);
    expect(served.slice(2)).toEqual(served.slice(0, 2));
  });

  it('builds its Clients with `factory` and reports their events with itself first in targets', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok('x'))));
    const made: unknown[] = [];
    const pool = cleanup.add(
      new RoundRobinPool(srv.origin, {
        factory: (origin, opts) => {
          made.push(origin);
          return new Client(origin, opts);
        },
      }),
    );
    const connected = once(pool, 'connect');
    await (await pool.request({ path: '/', method: 'GET' })).body.text();
    const [origin, targets] = await connected;
    // The first Client reports itself busy with its one request, so (as undici) the next is made
    // at once; it stays unused and unconnected.
    expect(made).toHaveLength(2);
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect((targets as Dispatcher[])[0]).toBe(pool);
    expect((targets as Dispatcher[]).length).toBe(2);
  });

  it('refuses bad options and, once destroyed, requests', async () => {
    expect(() => new RoundRobinPool('http://127.0.0.1:1', { connections: -1 })).toThrow(errors.InvalidArgumentError);
    expect(() => new RoundRobinPool('http://127.0.0.1:1', { factory: 5 as never })).toThrow('factory must be a function.');
    const pool = new RoundRobinPool('http://127.0.0.1:1');
    await pool.destroy();
    await expect(pool.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ClientDestroyedError);
    await expect(pool.close()).rejects.toBeInstanceOf(errors.ClientDestroyedError);
  });
});

describe("Pool with undici's factory / clientTtl options", () => {
  it('builds its connections through factory, and reports their events with itself first', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const made: unknown[] = [];
    const pool = cleanup.add(
      new Pool(srv.origin, {
        connections: 2,
        factory: (origin, opts) => {
          made.push(origin);
          return new Client(origin, opts);
        },
      }),
    );
    const connected = once(pool, 'connect');
    expect(await (await pool.request({ path: '/f', method: 'GET' })).body.text()).toBe('/f');
    const [, targets] = await connected;
    expect(made).toHaveLength(2); // the second made when the first reported itself busy (undici)
    expect((targets as Dispatcher[])[0]).toBe(pool);
    expect(pool.stats.connected).toBe(1);
  });

  it('makes no engine pool of its own: only the Clients it builds have one', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const pools = (): number => engineCounts().jsPools;
    const before = pools();
    const plain = cleanup.add(new Pool(srv.origin));
    expect(pools()).toBe(before + 1); // the control: an engine-served Pool has one
    await plain.close();
    expect(pools()).toBe(before);
    const made: Client[] = [];
    const factory = (origin: URL, opts: object): Dispatcher => {
      const client = new Client(origin, opts);
      made.push(client);
      return client;
    };
    const viaFactory = cleanup.add(new Pool(srv.origin, { factory }));
    const viaTtl = cleanup.add(new Pool(srv.origin, { clientTtl: 60_000 }));
    expect(pools()).toBe(before);
    expect(viaFactory.stats).toMatchObject({ connected: 0, size: 0 });
    expect(await (await viaFactory.request({ path: '/a', method: 'GET' })).body.text()).toBe('/a');
    expect(made.length).toBeGreaterThan(0);
    expect(pools()).toBe(before + made.length); // the factory's Clients, nothing else
    await viaFactory.close();
    expect(await (await viaTtl.request({ path: '/b', method: 'GET' })).body.text()).toBe('/b');
    await viaTtl.close();
    expect(pools()).toBe(before);
  });

  it('retires a Client older than clientTtl when its turn comes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
      const pool = cleanup.add(new Pool(srv.origin, { clientTtl: 1000 }));
      await (await pool.request({ path: '/1', method: 'GET' })).body.text();
      vi.setSystemTime(Date.now() + 5000);
      await (await pool.request({ path: '/2', method: 'GET' })).body.text();
      expect(srv.requests.map((r) => r.conn.index)).toEqual([0, 1]);
    } finally {
      vi.useRealTimers();
    }
  });
});
