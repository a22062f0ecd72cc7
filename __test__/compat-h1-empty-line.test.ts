// A stray CRLF after a complete response (issue 11, item 3): RFC 9112 §2.2 says to ignore empty
// lines before a status line, so the kept-alive connection survives; any other stray byte on an
// idle connection still closes it.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Client } from '../ts/index.js';
import { Cleanup, ok, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Counts the client's disconnect events. */
function disconnects(client: Client): { count: number } {
  const seen = { count: 0 };
  client.on('disconnect', () => seen.count++);
  return seen;
}

describe('empty lines after a response', () => {
  it('a response followed by \\r\\n in the same write: the socket is kept alive, the body ends cleanly', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path) + '\r\n')));
    const client = cleanup.add(new Client(srv.origin));
    const seen = disconnects(client);
    const first = await client.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('/1');
    const second = await client.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('/2');
    expect(srv.conns.length).toBe(1);
    expect(srv.requests.map((r) => r.conn.index)).toEqual([0, 0]);
    expect(seen.count).toBe(0);
  });

  it('a \\r\\n arriving on its own on an idle kept-alive socket is ignored', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    const seen = disconnects(client);
    const first = await client.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('/1');
    const conn = await srv.conn(0);
    await new Promise<void>((resolve) => conn.socket.write('\r\n\n', () => resolve()));
    const second = await client.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('/2');
    expect(srv.requests.map((r) => r.conn.index)).toEqual([0, 0]);
    expect(seen.count).toBe(0);
  });

  it('any other stray byte after a response still closes the connection', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path) + '\r\nX')));
    const client = cleanup.add(new Client(srv.origin));
    const disconnected = once(client, 'disconnect');
    const first = await client.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('/1');
    await disconnected;
    const conn = await srv.conn(0);
    await conn.closed;
    const second = await client.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('/2');
    expect(srv.requests.map((r) => r.conn.index)).toEqual([0, 1]);
  });
});
