// Agent (origin → Pool), BalancedPool (upstreams, weighted round-robin, busy / drain), stats on
// Client, Pool, Agent and BalancedPool, and the dispatcher events — against real local servers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { once } from 'node:events';
import { Agent, Client, Dispatcher, Pool, errors } from '../ts/index.js';
import { BalancedPool } from '../ts/dispatcher/balanced-pool.js';
import { Cleanup, ok, recorder, scriptServer, type ScriptServer } from './fixtures/h1.js';
import { httpServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A server that answers every request with its name and the path. */
async function named(name: string): Promise<ScriptServer> {
  return cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(`${name} ${req.path}`))));
}

async function text(d: Dispatcher, opts: Parameters<Dispatcher['request']>[0]): Promise<string> {
  return (await d.request(opts)).body.text();
}

/** An origin nothing listens on. */
async function deadOrigin(): Promise<string> {
  const srv = await httpServer(() => {});
  await srv.close();
  return srv.origin;
}

const idle = { connected: 0, free: 0, pending: 0, queued: 0, running: 0, size: 0 };
const idleClient = { connected: false, pending: 0, running: 0, size: 0 };

describe('Agent', () => {
  it('routes each request to the dispatcher of its origin, one per origin', async () => {
    const [a, b] = await Promise.all([named('a'), named('b')]);
    const agent = cleanup.add(new Agent());
    expect(await text(agent, { origin: a.origin, path: '/1', method: 'GET' })).toBe('a /1');
    expect(await text(agent, { origin: b.origin, path: '/2', method: 'GET' })).toBe('b /2');
    expect(await text(agent, { origin: `${a.origin}/ignored-path`, path: '/3', method: 'GET' })).toBe('a /3');
    expect(a.conns).toHaveLength(1);
    expect(b.conns).toHaveLength(1);
    expect(Object.keys(agent.stats).sort()).toEqual([a.origin, b.origin].sort());
  });

  it('every spelling of an origin reaches its one dispatcher, each time (the parsed origin is remembered)', async () => {
    const a = await named('a');
    const agent = cleanup.add(new Agent());
    const spellings = [a.origin, `${a.origin}/`, new URL(a.origin), new URL(`${a.origin}/x?y`), a.origin.toUpperCase()];
    for (let round = 0; round < 2; round++) {
      for (const [i, origin] of spellings.entries()) {
        expect(await text(agent, { origin, path: `/${round}${i}`, method: 'GET' })).toBe(`a /${round}${i}`);
      }
    }
    expect(a.conns).toHaveLength(1);
    expect(Object.keys(agent.stats)).toEqual([a.origin]);
    // A bad origin is refused on every call, not remembered.
    for (let i = 0; i < 2; i++) {
      expect(() => agent.dispatch({ origin: 'not a url', path: '/', method: 'GET' }, {})).toThrow(errors.InvalidArgumentError);
    }
  });

  it('creates dispatchers through `factory`, with the agent options minus its own', async () => {
    const a = await named('a');
    const calls: [string | URL, Record<string, unknown>][] = [];
    const agent = cleanup.add(
      new Agent({
        connections: 3,
        pipelining: 2,
        maxOrigins: 5,
        factory(origin, opts) {
          calls.push([origin, opts as Record<string, unknown>]);
          return new Pool(origin, opts);
        },
      }),
    );
    await text(agent, { origin: a.origin, path: '/', method: 'GET' });
    await text(agent, { origin: a.origin, path: '/', method: 'GET' });
    expect(calls).toHaveLength(1);
    // The request's origin as given (here a string), as undici's Agent gives its factory.
    expect(calls[0]![0]).toBe(a.origin);
    expect(calls[0]![1]).toMatchObject({ connections: 3, pipelining: 2 });
    expect(calls[0]![1].factory).toBeUndefined();
    expect(calls[0]![1].maxOrigins).toBeUndefined();
  });

  it('the default factory makes a Client for connections: 1 and a Pool otherwise', async () => {
    const a = await named('a');
    const made: Dispatcher[] = [];
    for (const connections of [1, 2]) {
      const agent = cleanup.add(new Agent({ connections }));
      agent.on('connect', (_o: URL, targets: Dispatcher[]) => made.push(targets[1]!));
      await text(agent, { origin: a.origin, path: '/', method: 'GET' });
    }
    expect(made[0]).toBeInstanceOf(Client);
    expect(made[1]).toBeInstanceOf(Pool);
    expect(made[1]).not.toBeInstanceOf(Client);
  });

  it('connections and pipelining reach each origin', async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const agent = cleanup.add(new Agent({ connections: 1, pipelining: 3 }));
    const results = ['/1', '/2', '/3', '/4'].map((path) =>
      text(agent, { origin: srv.origin, path, method: 'GET', blocking: false }),
    );
    const third = await srv.request(2);
    // Three in flight on the one connection before any answer; the fourth waits.
    expect(srv.conns).toHaveLength(1);
    third.conn.socket.write(ok('1') + ok('2') + ok('3'));
    const fourth = await srv.request(3);
    fourth.conn.socket.write(ok('4'));
    expect(await Promise.all(results)).toEqual(['1', '2', '3', '4']);
    expect(srv.conns).toHaveLength(1);
  });

  it('maxOrigins refuses a new origin while the others are in use, and frees a slot once one is unused', async () => {
    const [a, b] = await Promise.all([named('a'), named('b')]);
    const agent = cleanup.add(new Agent({ maxOrigins: 1, keepAliveTimeout: 100, keepAliveMaxTimeout: 100 }));
    expect(await text(agent, { origin: a.origin, path: '/', method: 'GET' })).toBe('a /');
    await expect(agent.request({ origin: b.origin, path: '/', method: 'GET' })).rejects.toBeInstanceOf(
      errors.MaxOriginsReachedError,
    );
    const [handler, rec] = recorder();
    expect(agent.dispatch({ origin: b.origin, path: '/', method: 'GET' }, handler)).toBe(false);
    await rec.done;
    expect(rec.error).toBeInstanceOf(errors.MaxOriginsReachedError);
    // a's connection times out: a no longer counts.
    await once(agent, 'disconnect');
    await vi.waitFor(() => expect(agent.stats[a.origin]).toBeUndefined());
    expect(await text(agent, { origin: b.origin, path: '/', method: 'GET' })).toBe('b /');
  });

  it('validates its options', () => {
    expect(() => new Agent({ maxOrigins: 0 })).toThrow(errors.InvalidArgumentError);
    expect(() => new Agent({ factory: 'nope' as never })).toThrow(errors.InvalidArgumentError);
  });

  it('requests without an origin are refused', async () => {
    const agent = cleanup.add(new Agent());
    await expect(agent.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
  });

  it('close waits for requests in flight; destroy fails them', async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const agent = new Agent();
    const pending = agent.request({ origin: srv.origin, path: '/', method: 'GET' });
    const req = await srv.request(0);
    const closing = agent.close();
    req.conn.socket.write(ok('late'));
    expect(await (await pending).body.text()).toBe('late');
    await closing;
    // Closed, then (as in undici) destroyed once the close finished.
    await expect(agent.request({ origin: srv.origin, path: '/', method: 'GET' })).rejects.toBeInstanceOf(
      errors.ClientDestroyedError,
    );

    const agent2 = new Agent();
    const hanging = agent2.request({ origin: srv.origin, path: '/', method: 'GET' });
    await srv.request(1);
    const boom = new Error('boom');
    const failed = expect(hanging).rejects.toBe(boom);
    await agent2.destroy(boom);
    await failed;
  });
});

describe('events', () => {
  it('connect and disconnect carry the origin and the chain of dispatchers, Agent first', async () => {
    const a = await named('a');
    const agent = cleanup.add(new Agent({ keepAliveTimeout: 50, keepAliveMaxTimeout: 50 }));
    const connected = once(agent, 'connect');
    const disconnected = once(agent, 'disconnect');
    await text(agent, { origin: a.origin, path: '/', method: 'GET' });
    const [origin, targets] = await connected;
    expect(origin).toBeInstanceOf(URL);
    expect(String(origin)).toBe(`${a.origin}/`);
    expect(targets).toHaveLength(2);
    expect(targets[0]).toBe(agent);
    expect(targets[1]).toBeInstanceOf(Pool);
    const [, dTargets, err] = await disconnected;
    expect(dTargets[0]).toBe(agent);
    expect(err).toBeInstanceOf(errors.InformationalError);
  });

  it('a connection that dies of a bad response reports disconnect with that error', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n')));
    const pool = cleanup.add(new Pool(srv.origin));
    const disconnected = once(pool, 'disconnect');
    await expect(pool.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.HTTPParserError);
    const [origin, targets, err] = await disconnected;
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets).toEqual([pool]);
    expect(err).toBeInstanceOf(errors.HTTPParserError);
  });

  it('connectionError reaches Pool and Agent listeners, with the request failing too', async () => {
    const origin = await deadOrigin();
    const agent = cleanup.add(new Agent());
    const seen = once(agent, 'connectionError');
    const err = await agent.request({ origin, path: '/', method: 'GET' }).then(
      () => null,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toBe('ECONNREFUSED');
    const [o, targets, cause] = await seen;
    expect(String(o)).toBe(`${origin}/`);
    expect(targets[0]).toBe(agent);
    expect(targets[1]).toBeInstanceOf(Pool);
    expect((cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('a Pool is busy at connections × pipelining requests, and drains', async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const pool = cleanup.add(new Pool(srv.origin, { connections: 2, pipelining: 1 }));
    const recs = [0, 1].map(() => recorder());
    expect(pool.dispatch({ path: '/1', method: 'GET' }, recs[0]![0])).toBe(true);
    expect(pool.dispatch({ path: '/2', method: 'GET' }, recs[1]![0])).toBe(false);
    const drained = once(pool, 'drain');
    const first = await srv.request(0);
    first.conn.socket.write(ok('x'));
    const [origin, targets] = await drained;
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets).toEqual([pool]);
    (await srv.request(1)).conn.socket.write(ok('y'));
    await Promise.all(recs.map(([, r]) => r.done));
  });

  it('an Agent forwards drain from its pools', async () => {
    const srv = await named('a');
    const agent = cleanup.add(new Agent({ connections: 1 }));
    const [handler, rec] = recorder();
    expect(agent.dispatch({ origin: srv.origin, path: '/', method: 'GET' }, handler)).toBe(false);
    const [origin, targets] = await once(agent, 'drain');
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets[0]).toBe(agent);
    expect(targets[1]).toBeInstanceOf(Client);
    await rec.done;
  });
});

describe('stats', () => {
  it("Client: undici's ClientStats, pending, running and size following the queue, connected the socket", async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const client = cleanup.add(new Client(srv.origin));
    expect({ ...client.stats }).toEqual(idleClient);
    const results = ['/1', '/2', '/3'].map((path) => text(client, { path, method: 'GET' }));
    const first = await srv.request(0);
    expect({ ...client.stats }).toEqual({ connected: true, pending: 2, running: 1, size: 3 });
    first.conn.socket.write(ok('1'));
    (await srv.request(1)).conn.socket.write(ok('2'));
    (await srv.request(2)).conn.socket.write(ok('3'));
    expect(await Promise.all(results)).toEqual(['1', '2', '3']);
    // The connection asks for more work as soon as it is idle.
    await vi.waitFor(() => expect({ ...client.stats }).toEqual({ ...idleClient, connected: true }));
  });

  it('Pool: several connections, and aborted requests leave the queue', async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const pool = cleanup.add(new Pool(srv.origin, { connections: 2 }));
    const ac = new AbortController();
    const results = [0, 1, 2, 3].map((i) =>
      pool.request({ path: `/${i}`, method: 'GET', signal: i === 3 ? ac.signal : undefined }).then(
        (r) => r.body.text(),
        (e: Error) => e,
      ),
    );
    await srv.request(1);
    expect(pool.stats).toEqual({ connected: 2, free: 0, pending: 2, queued: 2, running: 2, size: 4 });
    ac.abort();
    await results[3];
    expect(pool.stats).toMatchObject({ pending: 1, running: 2, size: 3 });
    for (const r of srv.requests.slice(0, 2)) r.conn.socket.write(ok('x'));
    (await srv.request(2)).conn.socket.write(ok('x'));
    const settled = await Promise.all(results);
    expect(settled.slice(0, 3)).toEqual(['x', 'x', 'x']);
    expect(settled[3]).toBeInstanceOf(errors.RequestAbortedError);
    await vi.waitFor(() => expect(pool.stats).toEqual({ ...idle, connected: 2, free: 2 }));
  });

  it('a closed or destroyed dispatcher reports nothing', async () => {
    const srv = await named('a');
    const client = new Client(srv.origin);
    await text(client, { path: '/', method: 'GET' });
    expect(client.stats.connected).toBe(true);
    await client.destroy();
    expect({ ...client.stats }).toEqual(idleClient);
    const pool = new Pool(srv.origin);
    await text(pool, { path: '/', method: 'GET' });
    expect(pool.stats.connected).toBe(1);
    await pool.close();
    expect(pool.stats).toEqual(idle);
  });

  it('Agent: one entry per origin', async () => {
    const [a, b] = await Promise.all([named('a'), cleanup.add(await scriptServer(() => {}))]);
    const agent = cleanup.add(new Agent());
    await text(agent, { origin: a.origin, path: '/', method: 'GET' });
    const hanging = agent.request({ origin: b.origin, path: '/', method: 'GET' }).catch(() => {});
    await b.request(0);
    const stats = agent.stats;
    expect(stats[a.origin]).toMatchObject({ connected: 1, running: 0, size: 0 });
    expect(stats[b.origin]).toMatchObject({ connected: 1, running: 1, size: 1 });
    void hanging;
  });
});

describe('BalancedPool', () => {
  it('keeps a set of upstreams: add, dedupe, remove, list', async () => {
    const [a, b, c] = await Promise.all([named('a'), named('b'), named('c')]);
    const bp = cleanup.add(new BalancedPool([a.origin, new URL(b.origin)]));
    expect(bp.upstreams).toEqual([a.origin, b.origin]);
    expect(bp.addUpstream(`${a.origin}/`)).toBe(bp);
    expect(bp.upstreams).toEqual([a.origin, b.origin]);
    bp.addUpstream(c.origin).removeUpstream(a.origin);
    expect(bp.upstreams).toEqual([b.origin, c.origin]);
    expect(bp.removeUpstream('http://127.0.0.1:1')).toBe(bp);
    expect(() => bp.addUpstream('http://127.0.0.1:1/path')).toThrow(errors.InvalidArgumentError);
    expect(() => bp.addUpstream('ftp://127.0.0.1:1')).toThrow(errors.InvalidArgumentError);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await text(bp, { path: '/', method: 'GET' })).split(' ')[0]!);
    expect([...seen].sort()).toEqual(['b', 'c']);
    expect(a.requests).toHaveLength(0);
  });

  it('without upstreams fails with BalancedPoolMissingUpstreamError', async () => {
    const bp = cleanup.add(new BalancedPool());
    await expect(bp.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.BalancedPoolMissingUpstreamError);
    const [handler, rec] = recorder();
    expect(bp.dispatch({ path: '/', method: 'GET' }, handler)).toBe(false);
    await rec.done;
    expect(rec.error).toBeInstanceOf(errors.BalancedPoolMissingUpstreamError);
  });

  it('takes healthy upstreams in turn', async () => {
    const servers = await Promise.all([named('a'), named('b'), named('c')]);
    const bp = cleanup.add(new BalancedPool(servers.map((s) => s.origin)));
    const order: string[] = [];
    for (let i = 0; i < 9; i++) order.push((await text(bp, { path: '/', method: 'GET' })).split(' ')[0]!);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('an upstream that fails to connect loses weight and gets fewer requests', async () => {
    const [a, b] = await Promise.all([named('a'), named('b')]);
    const dead = await deadOrigin();
    const bp = cleanup.add(new BalancedPool([a.origin, dead, b.origin], { maxWeightPerServer: 100, errorPenalty: 90 }));
    const errorsSeen = once(bp, 'connectionError');
    let failures = 0;
    for (let i = 0; i < 24; i++) {
      await text(bp, { path: '/', method: 'GET' }).catch((e: NodeJS.ErrnoException) => {
        expect(e.code).toBe('ECONNREFUSED');
        failures++;
      });
    }
    // Plain round-robin would send it 8 of 24; at weight 10 against 100 + 100 it gets about 1 in 21.
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(failures).toBeLessThanOrEqual(3);
    expect(a.requests.length + b.requests.length).toBe(24 - failures);
    const [origin, targets] = await errorsSeen;
    expect(String(origin)).toBe(`${dead}/`);
    expect(targets[0]).toBe(bp);
    expect(targets[1]).toBeInstanceOf(Pool);
  });

  it('prefers upstreams that are not busy; busy everywhere returns false, then drains', async () => {
    const [a, b] = await Promise.all([scriptServer(() => {}), scriptServer(() => {})]);
    cleanup.add(a);
    cleanup.add(b);
    const bp = cleanup.add(new BalancedPool([a.origin, b.origin], { connections: 1 }));
    const [h1, r1] = recorder();
    const [h2, r2] = recorder();
    expect(bp.dispatch({ path: '/1', method: 'GET' }, h1)).toBe(true);
    expect(bp.dispatch({ path: '/2', method: 'GET' }, h2)).toBe(false);
    const reqA = await a.request(0);
    const reqB = await b.request(0);
    expect([reqA.path, reqB.path]).toEqual(['/1', '/2']);
    const drained = once(bp, 'drain');
    reqB.conn.socket.write(ok('b'));
    const [origin, targets] = await drained;
    expect(String(origin)).toBe(`${b.origin}/`);
    expect(targets[0]).toBe(bp);
    await r2.done;
    // a is still busy: the next request goes to b.
    const [h3, r3] = recorder();
    bp.dispatch({ path: '/3', method: 'GET' }, h3);
    (await b.request(1)).conn.socket.write(ok('b3'));
    await r3.done;
    expect(r3.text()).toBe('b3');
    reqA.conn.socket.write(ok('a'));
    await r1.done;
    expect(r1.text()).toBe('a');
  });

  it('stats add up the upstreams', async () => {
    const [a, b] = await Promise.all([scriptServer(() => {}), scriptServer(() => {})]);
    cleanup.add(a);
    cleanup.add(b);
    const bp = cleanup.add(new BalancedPool([a.origin, b.origin]));
    expect(bp.stats).toEqual(idle);
    const results = [1, 2].map((i) => text(bp, { path: `/${i}`, method: 'GET' }));
    await a.request(0);
    await b.request(0);
    expect(bp.stats).toEqual({ connected: 2, free: 0, pending: 0, queued: 0, running: 2, size: 2 });
    a.requests[0]!.conn.socket.write(ok('a'));
    b.requests[0]!.conn.socket.write(ok('b'));
    expect((await Promise.all(results)).sort()).toEqual(['a', 'b']);
  });

  it('a removed upstream finishes what it has, then closes', async () => {
    const [a, b] = await Promise.all([scriptServer(() => {}), named('b')]);
    cleanup.add(a);
    const bp = cleanup.add(new BalancedPool([a.origin, b.origin]));
    const inFlight = text(bp, { path: '/slow', method: 'GET' });
    const req = await a.request(0);
    bp.removeUpstream(a.origin);
    expect(await text(bp, { path: '/next', method: 'GET' })).toBe('b /next');
    req.conn.socket.write(ok('a done'));
    expect(await inFlight).toBe('a done');
    await a.conns[0]!.closed;
  });

  it('close and destroy reach every upstream', async () => {
    const [a, b] = await Promise.all([named('a'), scriptServer(() => {})]);
    cleanup.add(b);
    const bp = new BalancedPool([a.origin, b.origin]);
    expect(await text(bp, { path: '/', method: 'GET' })).toBe('a /');
    const hanging = bp.request({ path: '/', method: 'GET' });
    await b.request(0);
    const boom = new Error('boom');
    const failed = expect(hanging).rejects.toBe(boom);
    await bp.destroy(boom);
    await failed;
    expect(bp.destroyed).toBe(true);
    await expect(bp.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ClientDestroyedError);
    await a.conns[0]!.closed;

    const bp2 = new BalancedPool([a.origin]);
    await text(bp2, { path: '/', method: 'GET' });
    await bp2.close();
    expect(bp2.closed).toBe(true);
    // As undici: a pool whose close has finished is destroyed.
    await expect(bp2.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ClientDestroyedError);
    await a.conns[1]!.closed;
  });
});

describe('Agent: closing after a dropped connection', () => {
  it('close() or destroy() right after a connection dropped leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const srv = await httpServer((req) => req.socket.destroy());
      for (const end of ['destroy', 'close'] as const) {
        const agent = new Agent();
        await agent.request({ origin: srv.origin, path: '/', method: 'GET' }).catch(() => {});
        await agent[end]();
        // The dispatcher's 'disconnect' comes after the Agent ended it.
        await new Promise((r) => setTimeout(r, 20));
      }
      await srv.close();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
