// An Agent's maxGlobalConnections / maxQueueTime (issue 34 item 2) against real node:http servers
// on several ports: sockets are counted on the servers' side.
import { afterEach, describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Agent, errors, type ClientStats, type PoolStats } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { httpServer, type Running } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/**
 * Sockets open across every origin of a test, and the most seen at once. A socket counts as
 * closed when the client's FIN arrives ('end'), or on 'close' if that comes first: the client
 * gives its slot back once it closed its side, and the server's own 'close' can come a turn later
 * than the next connection it accepts.
 */
class Sockets {
  open = 0;
  max = 0;
  readonly closed: string[] = [];
  watch(name: string, socket: Socket): void {
    this.max = Math.max(this.max, ++this.open);
    let gone = false;
    const down = () => {
      if (gone) return;
      gone = true;
      this.open--;
      this.closed.push(name);
    };
    socket.on('end', down);
    socket.on('close', down);
  }
}

interface Origin extends Running<import('node:http').Server> {
  name: string;
}

async function origin(name: string, sockets: Sockets, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Origin> {
  const srv = cleanup.add(await httpServer(handle));
  srv.server.on('connection', (s: Socket) => sockets.watch(name, s));
  return Object.assign(srv, { name });
}

const get = (agent: Agent, o: Origin, path = '/') => agent.request({ origin: o.origin, path, method: 'GET' }).then((r) => r.body.text());

describe('maxGlobalConnections', () => {
  it('never opens more than N sockets across origins; requests over the cap wait and all succeed', async () => {
    const sockets = new Sockets();
    // Each response waits for the next turn of the event loop, so requests overlap.
    const reply = (req: IncomingMessage, res: ServerResponse) => setImmediate(() => res.end(req.url));
    const origins = await Promise.all(['a', 'b', 'c'].map((n) => origin(n, sockets, reply)));
    const agent = cleanup.add(new Agent({ maxGlobalConnections: 2 }));
    const all = origins.flatMap((o) => Array.from({ length: 10 }, (_, i) => get(agent, o, `/${o.name}${i}`)));
    const bodies = await Promise.all(all);
    expect(bodies).toHaveLength(30);
    expect(bodies[29]).toBe('/c9');
    expect(sockets.max).toBeLessThanOrEqual(2);
    expect(sockets.max).toBe(2);
  });

  it('serves origins in turn when they wait for the cap', async () => {
    const sockets = new Sockets();
    const served: string[] = [];
    const reply = (name: string) => (req: IncomingMessage, res: ServerResponse) => {
      served.push(name);
      setImmediate(() => res.end('ok'));
    };
    const a = await origin('a', sockets, reply('a'));
    const b = await origin('b', sockets, reply('b'));
    const agent = cleanup.add(new Agent({ maxGlobalConnections: 1 }));
    // All of a's requests first, then all of b's: without turns a would be served to the end.
    const all = [...Array.from({ length: 5 }, () => get(agent, a)), ...Array.from({ length: 5 }, () => get(agent, b))];
    await Promise.all(all);
    expect(sockets.max).toBe(1);
    expect(served.join('')).toBe('ababababab');
  });

  it('closes an idle socket of another origin to make room', async () => {
    const sockets = new Sockets();
    const a = await origin('a', sockets, (_req, res) => res.end('a'));
    const b = await origin('b', sockets, (_req, res) => res.end('b'));
    const agent = cleanup.add(new Agent({ maxGlobalConnections: 1 }));
    expect(await get(agent, a)).toBe('a');
    expect(sockets.open).toBe(1);
    expect(await get(agent, b)).toBe('b');
    expect(sockets.closed).toEqual(['a']);
    expect(sockets.max).toBe(1);
  });

  it('rejects a request that waited longer than maxQueueTime with QueueTimeoutError', async () => {
    const sockets = new Sockets();
    const held: ServerResponse[] = [];
    const a = await origin('a', sockets, (_req, res) => void held.push(res));
    const b = await origin('b', sockets, (_req, res) => res.end('b'));
    const agent = cleanup.add(new Agent({ maxGlobalConnections: 1, maxQueueTime: 50 }));
    const first = get(agent, a);
    await once(a.server, 'request');
    const started = performance.now();
    const err = await get(agent, b).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.QueueTimeoutError);
    expect(err).toMatchObject({ code: 'UND_ERR_QUEUE_TIMEOUT', name: 'QueueTimeoutError' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    held[0].end('a');
    expect(await first).toBe('a');
    // The timed-out request never reached b; the next one does.
    expect(await get(agent, b)).toBe('b');
    expect(sockets.max).toBe(1);
  });

  it('reports open, idle, pending, queued and wait per origin and in total, and publishes lib:pool:queue', async () => {
    const sockets = new Sockets();
    const held: ServerResponse[] = [];
    const a = await origin('a', sockets, (_req, res) => void held.push(res));
    const b = await origin('b', sockets, (_req, res) => res.end('b'));
    const agent = cleanup.add(new Agent({ maxGlobalConnections: 1 }));
    const messages: { origin: string; queued: number }[] = [];
    const listener = (m: unknown) => messages.push(m as { origin: string; queued: number });
    dc.subscribe('lib:pool:queue', listener);
    cleanup.defer(async () => dc.unsubscribe('lib:pool:queue', listener));
    const first = get(agent, a);
    await once(a.server, 'request');
    const queued = new Promise<void>((resolve) => {
      const first = () => {
        dc.unsubscribe('lib:pool:queue', first);
        resolve();
      };
      dc.subscribe('lib:pool:queue', first);
    });
    const sent = performance.now();
    const second = get(agent, b);
    await queued;
    const s = agent.stats as Record<string, { open: number; idle: number; pending: number; queued: number; wait: number }>;
    const waited = performance.now() - sent;
    expect(s[a.origin]).toMatchObject({ open: 1, idle: 0, pending: 1, queued: 0, wait: 0 });
    expect(s[b.origin]).toMatchObject({ open: 0, idle: 0, pending: 0, queued: 1 });
    // The oldest queued request's age: b's, since it was sent.
    expect(s[b.origin].wait).toBeGreaterThanOrEqual(0);
    expect(s[b.origin].wait).toBeLessThanOrEqual(Math.ceil(waited));
    expect(s.total).toMatchObject({ open: 1, idle: 0, pending: 1, queued: 1 });
    expect(s.total.wait).toBe(s[b.origin].wait);
    // undici's PoolStats fields ride along, so code typed for undici's agent.stats reads them.
    const pools: Record<string, PoolStats | ClientStats> = agent.stats;
    expect(pools[a.origin]).toMatchObject({ connected: 1, free: 0, running: 1, size: 1 });
    expect(pools.total).toMatchObject({ connected: 1, free: 0, running: 1, size: 2 });
    expect(messages).toEqual([{ origin: b.origin, queued: 1 }]);
    held[0].end('a');
    expect(await first).toBe('a');
    expect(await second).toBe('b');
    expect(messages).toEqual([
      { origin: b.origin, queued: 1 },
      { origin: b.origin, queued: 0 },
    ]);
    const after = agent.stats as Record<string, { queued: number; wait: number }>;
    expect(after.total).toMatchObject({ queued: 0, wait: 0 });
  });

  it('checks its options with InvalidArgumentError', () => {
    for (const bad of [0, -1, 1.5, '2', NaN]) {
      expect(() => new Agent({ maxGlobalConnections: bad as number })).toThrow(errors.InvalidArgumentError);
    }
    for (const bad of [-1, NaN, Infinity, '5']) {
      expect(() => new Agent({ maxGlobalConnections: 1, maxQueueTime: bad as number })).toThrow(errors.InvalidArgumentError);
    }
    expect(() => new Agent({ maxQueueTime: 10 })).toThrow(errors.InvalidArgumentError);
  });
});
