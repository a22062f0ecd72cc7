// A response nobody asked for, written on an idle kept-alive connection in the same event-loop
// turn as the next request (issue 28, item 11; undici's GHSA-35p6-xmwp-9g52). The stray bytes are
// in the client's socket before the request is dispatched, but no reactor turn has reported them:
// a client that writes the request first then reads the stray as its answer. Here the request must
// go out on a fresh connection and get its own answer, whatever its method (as undici 8.10).
// The race is exact on the inline driver (the engine's reactor only turns when JS lets it); the
// threaded one usually sees the stray first, and is held to the same outcome.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Client, errors } from '../ts/index.js';
import { Cleanup, ok, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const STRAY = ok('POISON', 'x-stray: 1\r\n');

/** A server answering every request with its path, and a client whose first connection is idle. */
async function idleConnection(pipelining = 1) {
  const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
  const client = cleanup.add(new Client(srv.origin, { keepAliveTimeout: 60e3, pipelining }));
  const first = await client.request({ path: '/first', method: 'GET' });
  expect(await first.body.text()).toBe('/first');
  return { srv, client, idle: srv.conns[0]! };
}

describe('a stray response on an idle keep-alive connection', () => {
  for (const method of ['GET', 'POST'] as const) {
    it(`never answers the ${method} dispatched in the same turn`, async () => {
      const { srv, client, idle } = await idleConnection();
      const disconnected = once(client, 'disconnect');
      idle.socket.write(STRAY);
      const next = client.request({ path: '/next', method, body: method === 'POST' ? 'data' : undefined });
      const res = await next;
      expect(res.headers['x-stray']).toBeUndefined();
      expect(await res.body.text()).toBe('/next');
      // The connection ends as undici's does (GHSA-35p6): a SocketError, 'bad response'.
      const [, , err] = await disconnected;
      expect(err).toBeInstanceOf(errors.SocketError);
      expect((err as Error).message).toBe('bad response');
      // Never written on the poisoned connection, so safe to send on a fresh one.
      expect(idle.requests).toHaveLength(1);
      expect(srv.conns).toHaveLength(2);
      expect(srv.conns[1]!.requests.map((r) => [r.method, r.path, r.body])).toEqual([
        [method, '/next', method === 'POST' ? 'data' : ''],
      ]);
    });
  }

  it('never answers any of several requests pipelined onto it in the same turn', async () => {
    const { srv, client, idle } = await idleConnection(3);
    idle.socket.write(STRAY);
    const paths = ['/a', '/b', '/c'];
    const pending = paths.map((path) => client.request({ path, method: 'GET' }));
    const bodies = await Promise.all(pending.map(async (p) => (await p).body.text()));
    expect(bodies).toEqual(paths);
    expect(idle.requests).toHaveLength(1);
    expect(srv.conns.slice(1).flatMap((c) => c.requests.map((r) => r.path))).toEqual(paths);
  });
});
