// A custom `connect` may return its socket before it calls back (undici 8.13, issue 35 item 27):
// once every request waiting for that connection attempt has aborted, the attempt is given up —
// the returned socket is destroyed, nothing fails with it (no 'connectionError'), and the next
// request starts a new attempt. undici's built-in connector returns its socket, so the engine's
// own connection attempts are given up the same way.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import { Client, errors } from '../ts/index.js';
import type { Connector } from '../ts/core/connector.js';
import { Cleanup } from './fixtures/h1.js';
import { httpServer, rawServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/**
 * A connector whose first attempt never completes (its socket is returned, or not), and whose
 * later attempts connect to `port`.
 */
function stalledFirst(port: number, returnIt: boolean): { connect: Connector; first: Promise<Socket> } {
  let calls = 0;
  let giveFirst!: (s: Socket) => void;
  const first = new Promise<Socket>((r) => (giveFirst = r));
  const connect: Connector = (_opts, callback) => {
    if (calls++ === 0) {
      // Never connected, never called back: only a cancel ends it.
      const stalled = new net.Socket();
      giveFirst(stalled);
      return returnIt ? stalled : undefined;
    }
    const socket = net.connect(port, '127.0.0.1', () => callback(null, socket));
    socket.on('error', (err) => callback(err, null));
    return socket;
  };
  return { connect, first };
}

describe('a connector that returns its socket', () => {
  it('the attempt is cancelled once its only request aborted; the next request connects anew', async () => {
    const srv = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const { connect, first } = stalledFirst(srv.port, true);
    const client = cleanup.add(new Client(srv.origin, { connect }));
    const failures: Error[] = [];
    client.on('connectionError', (_o, _t, err: Error) => failures.push(err));
    const ac = new AbortController();
    const waiting = client.request({ path: '/', method: 'GET', signal: ac.signal });
    const stalled = await first;
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(errors.RequestAbortedError);
    if (!stalled.destroyed) await once(stalled, 'close');
    expect(stalled.destroyed).toBe(true);
    const { body } = await client.request({ path: '/', method: 'GET' });
    expect(await body.text()).toBe('ok');
    expect(failures).toEqual([]);
  });

  it('a connector that returns nothing keeps its attempt (undici cannot cancel it either)', async () => {
    const srv = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const { connect, first } = stalledFirst(srv.port, false);
    const client = cleanup.add(new Client(srv.origin, { connect }));
    const ac = new AbortController();
    const waiting = client.request({ path: '/', method: 'GET', signal: ac.signal });
    const stalled = await first;
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(errors.RequestAbortedError);
    await new Promise((r) => setImmediate(r));
    expect(stalled.destroyed).toBe(false);
    stalled.destroy();
  });
});

describe("the engine's own connection attempts", () => {
  it('a TLS handshake nobody waits for any more is given up; the next request connects anew', async () => {
    // Accepts, and never answers the TLS handshake: each attempt waits until it is given up.
    const accepted: Socket[] = [];
    const waiters: ((s: Socket) => void)[] = [];
    const srv = cleanup.add(
      await rawServer((socket) => {
        socket.on('error', () => {});
        // Reads (and drops) the handshake, so the client's close is seen.
        socket.resume();
        accepted.push(socket);
        waiters.shift()?.(socket);
      }),
    );
    const nth = (n: number): Promise<Socket> =>
      accepted[n] ? Promise.resolve(accepted[n]!) : new Promise((r) => waiters.push(r));
    const client = cleanup.add(new Client(`https://localhost:${srv.port}`, { connectTimeout: 60_000 }));
    const failures: Error[] = [];
    client.on('connectionError', (_o, _t, err: Error) => failures.push(err));

    const first = new AbortController();
    const a = client.request({ path: '/', method: 'GET', signal: first.signal });
    const socketA = await nth(0);
    first.abort();
    await expect(a).rejects.toBeInstanceOf(errors.RequestAbortedError);
    if (!socketA.closed) await once(socketA, 'close');

    const second = new AbortController();
    const b = client.request({ path: '/', method: 'GET', signal: second.signal });
    await nth(1);
    second.abort();
    await expect(b).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(failures).toEqual([]);
  });
});
