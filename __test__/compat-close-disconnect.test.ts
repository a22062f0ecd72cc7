// close() and destroy() end the connections a dispatcher still holds, and each end is a
// 'disconnect', as undici's (issue 35 item 19): close() passes ClientDestroyedError (undici closes
// by destroying), destroy(err) passes err; the event comes before close() / destroy() settles.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Client, Pool, errors, type Dispatcher } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';
import { httpServer } from './fixtures/servers.js';
import { ca, h2Server } from './fixtures/h2.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

type Disconnect = { origin: URL; targets: Dispatcher[]; err: Error };

/** Records every 'disconnect' of `d`. */
function disconnects(d: Dispatcher): Disconnect[] {
  const seen: Disconnect[] = [];
  d.on('disconnect', (origin: URL, targets: readonly Dispatcher[], err: Error) => seen.push({ origin, targets: [...targets], err }));
  return seen;
}

async function server(): Promise<string> {
  const srv = await httpServer((_req, res) => res.end('ok'));
  cleanup.defer(() => srv.close());
  return srv.origin;
}

async function get(d: Dispatcher, origin: string, path = '/'): Promise<void> {
  const { body } = await d.request({ origin, path, method: 'GET' });
  await body.text();
}

describe("'disconnect' when a dispatcher ends its idle connections", () => {
  it('Client.close() on an idle connection: ClientDestroyedError, before close() settles', async () => {
    const origin = await server();
    const client = new Client(origin);
    const seen = disconnects(client);
    await get(client, origin);
    await client.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.origin).toBeInstanceOf(URL);
    expect(seen[0]!.origin.origin).toBe(origin);
    expect(seen[0]!.targets).toEqual([client]);
    expect(seen[0]!.err).toBeInstanceOf(errors.ClientDestroyedError);
    expect((seen[0]!.err as errors.UndiciError).code).toBe('UND_ERR_DESTROYED');
  });

  it('Client.destroy(err) passes err; destroy() passes ClientDestroyedError', async () => {
    const origin = await server();
    const given = new Error('going away');
    const a = new Client(origin);
    const seenA = disconnects(a);
    await get(a, origin);
    await a.destroy(given);
    expect(seenA.map((d) => d.err)).toEqual([given]);

    const b = new Client(origin);
    const seenB = disconnects(b);
    await get(b, origin);
    await b.destroy();
    expect(seenB).toHaveLength(1);
    expect(seenB[0]!.err).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('a close() that waits for a request ends its connection the same way, after the body', async () => {
    const origin = await server();
    const client = new Client(origin);
    const seen = disconnects(client);
    const order: string[] = [];
    client.on('disconnect', () => order.push('disconnect'));
    const { body } = await client.request({ path: '/', method: 'GET' });
    const closed = client.close().then(() => order.push('closed'));
    body.on('end', () => order.push('end'));
    body.resume();
    await closed;
    expect(order).toEqual(['end', 'disconnect', 'closed']);
    expect(seen[0]!.err).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('Pool.close() reports each of its connections', async () => {
    const origin = await server();
    const pool = new Pool(origin, { connections: 2, pipelining: 1 });
    const seen = disconnects(pool);
    await Promise.all([get(pool, origin, '/1'), get(pool, origin, '/2')]);
    expect(pool.stats.connected).toBe(2);
    await pool.close();
    expect(seen).toHaveLength(2);
    for (const d of seen) {
      expect(d.targets).toEqual([pool]);
      expect(d.err).toBeInstanceOf(errors.ClientDestroyedError);
    }
  });

  it("Agent.close() forwards its pools' disconnects, Agent first", async () => {
    const origin = await server();
    const agent = new Agent();
    const seen = disconnects(agent);
    await get(agent, origin);
    await agent.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.targets[0]).toBe(agent);
    expect(seen[0]!.targets).toHaveLength(2);
    expect(seen[0]!.err).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('an HTTP/2 session ends the same way', async () => {
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.respond({ ':status': 200 });
        stream.end('ok');
      }),
    );
    const client = new Client(srv.origin, { allowH2: true, connect: { ca } });
    const seen = disconnects(client);
    await get(client, srv.origin);
    await client.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.err).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('a dispatcher that never connected reports nothing', async () => {
    const origin = await server();
    const client = new Client(origin);
    const seen = disconnects(client);
    await client.close();
    const other = new Client(origin);
    const seenOther = disconnects(other);
    await other.destroy();
    expect(seen).toEqual([]);
    expect(seenOther).toEqual([]);
  });
});
