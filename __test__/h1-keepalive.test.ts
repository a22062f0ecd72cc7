// Keep-alive: idle timeouts (ours and the server's Keep-Alive hint), sockets the server closed or
// marked `connection: close`, HTTP/1.0, and maxRequestsPerClient — watched from raw servers.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Client, errors } from '../ts/index.js';
import { Cleanup, ok, recorder, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Serves every request with `ok(path, extra)` and times how long the client keeps each socket idle. */
async function idleServer(extra = '') {
  const answered: number[] = [];
  const srv = cleanup.add(
    await scriptServer((req) => {
      req.conn.socket.write(ok(req.path, extra), () => (answered[req.conn.index] = performance.now()));
    }),
  );
  /** Milliseconds from the last answer on connection `n` until the client closed it. */
  const idleFor = async (n: number): Promise<number> => {
    const conn = await srv.conn(n);
    await conn.ended;
    return performance.now() - answered[n]!;
  };
  return { srv, idleFor };
}

async function get(client: Client, path = '/'): Promise<string> {
  return (await client.request({ path, method: 'GET' })).body.text();
}

describe('idle timeouts', () => {
  it('keepAliveTimeout closes an idle socket when the server gives no hint', async () => {
    const { srv, idleFor } = await idleServer();
    const client = cleanup.add(new Client(srv.origin, { keepAliveTimeout: 150 }));
    const disconnected = once(client, 'disconnect');
    expect(await get(client)).toBe('/');
    const idle = await idleFor(0);
    expect(idle).toBeGreaterThanOrEqual(140);
    expect(idle).toBeLessThan(1500);
    const [origin, targets, err] = await disconnected;
    expect(String(origin)).toBe(`${srv.origin}/`);
    expect(targets).toEqual([client]);
    expect(err).toBeInstanceOf(errors.InformationalError);
    // The next request simply gets a new connection.
    expect(await get(client, '/again')).toBe('/again');
    expect(srv.conns).toHaveLength(2);
  });

  it('keepAliveTimeout defaults to 4 seconds', async () => {
    const { srv, idleFor } = await idleServer();
    const client = cleanup.add(new Client(srv.origin));
    await get(client);
    const idle = await idleFor(0);
    expect(idle).toBeGreaterThanOrEqual(3900);
    expect(idle).toBeLessThan(6000);
  }, 10_000);

  it("the server's Keep-Alive hint wins over keepAliveTimeout, less keepAliveTimeoutThreshold", async () => {
    const { srv, idleFor } = await idleServer('Keep-Alive: timeout=5\r\n');
    const client = cleanup.add(new Client(srv.origin, { keepAliveTimeout: 60_000, keepAliveTimeoutThreshold: 4850 }));
    await get(client);
    const idle = await idleFor(0);
    expect(idle).toBeGreaterThanOrEqual(140);
    expect(idle).toBeLessThan(1500);
  });

  it('keepAliveTimeoutThreshold defaults to 2 seconds', async () => {
    const { srv, idleFor } = await idleServer('Keep-Alive: timeout=3\r\n');
    const client = cleanup.add(new Client(srv.origin, { keepAliveTimeout: 60_000 }));
    await get(client);
    const idle = await idleFor(0);
    expect(idle).toBeGreaterThanOrEqual(950);
    expect(idle).toBeLessThan(2500);
  });

  it('keepAliveMaxTimeout caps the hint', async () => {
    const { srv, idleFor } = await idleServer('Keep-Alive: timeout=600, max=100\r\n');
    const client = cleanup.add(new Client(srv.origin, { keepAliveMaxTimeout: 150, keepAliveTimeoutThreshold: 0 }));
    await get(client);
    const idle = await idleFor(0);
    expect(idle).toBeGreaterThanOrEqual(140);
    expect(idle).toBeLessThan(1500);
  });

  it('a hint no longer than the threshold means the socket is not reused at all', async () => {
    const { srv } = await idleServer('Keep-Alive: timeout=1\r\n');
    const client = cleanup.add(new Client(srv.origin));
    // Both queued at once: the second must not ride on a socket the server is about to drop.
    const [a, b] = await Promise.all([get(client, '/a'), get(client, '/b')]);
    expect([a, b]).toEqual(['/a', '/b']);
    expect(srv.conns).toHaveLength(2);
  });
});

describe('sockets the server is done with', () => {
  it('an idle socket the server closed is not used for the next request; no error reaches the user', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    expect(await get(client, '/a')).toBe('/a');
    const disconnected = once(client, 'disconnect');
    srv.conns[0]!.socket.end();
    await disconnected;
    const res = await client.request({ path: '/post', method: 'POST', body: 'x' });
    expect(await res.body.text()).toBe('/post');
    expect(srv.conns).toHaveLength(2);
  });

  it('a close arriving with the last response is noticed before the next request is written', async () => {
    // The server ends the socket right behind its answer (no `connection: close` header). A POST
    // queued behind must not be written into the closing socket: it could not be re-sent.
    const srv = cleanup.add(await scriptServer((req) => req.conn.index > 0 && req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    // Paused from the start, the engine leaves the answer unread until the close is there too.
    const [handler, rec] = recorder({ onRequestStart: (c) => c.pause() });
    client.dispatch({ path: '/a', method: 'GET' }, handler);
    const post = client.request({ path: '/post', method: 'POST', body: 'x' });
    const first = await srv.request(0);
    first.conn.socket.end(ok('/a'));
    await once(first.conn.socket, 'finish');
    rec.controller!.resume();
    await rec.done;
    expect(rec.text()).toBe('/a');
    expect(await (await post).body.text()).toBe('/post');
    expect(srv.conns[0]!.requests.map((r) => r.path)).toEqual(['/a']);
  });

  it('a pause from onRequestStart holds the response back until resume', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok('body'))));
    const client = cleanup.add(new Client(srv.origin));
    const [handler, rec] = recorder({ onRequestStart: (c) => c.pause() });
    client.dispatch({ path: '/a', method: 'GET' }, handler);
    await srv.request(0);
    // The answer is there; a paused request must not see it. A request on a second connection,
    // answered after it, is the barrier: the engine would have delivered the first answer by then.
    const other = cleanup.add(new Client(srv.origin));
    expect(await (await other.request({ path: '/b', method: 'GET' })).body.text()).toBe('body');
    expect(rec.events).toEqual(['start']);
    rec.controller!.resume();
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200', 'end']);
  });

  it('`connection: close` from the server ends reuse even if the server keeps the socket open', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.write(ok(req.path, req.n === 0 ? 'Connection: close\r\n' : ''))),
    );
    const client = cleanup.add(new Client(srv.origin));
    expect(await get(client, '/a')).toBe('/a');
    await srv.conns[0]!.closed;
    expect(await get(client, '/b')).toBe('/b');
    expect(srv.conns).toHaveLength(2);
  });

  it('requests pipelined behind a `connection: close` response are re-sent on a new connection', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.conn.index > 0) return void req.conn.socket.write(ok(`again ${req.path}`));
        // Both requests are in: answer the first only, say close, and hang up.
        if (req.n === 1) req.conn.socket.end(ok('/a', 'Connection: close\r\n'));
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 2 }));
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const b = client.request({ path: '/b', method: 'GET', blocking: false });
    expect(await (await a).body.text()).toBe('/a');
    expect(await (await b).body.text()).toBe('again /b');
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/b']);
  });

  it('an HTTP/1.0 response without keep-alive ends reuse', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.write(`HTTP/1.0 200 OK\r\nContent-Length: ${req.path.length}\r\n\r\n${req.path}`)),
    );
    const client = cleanup.add(new Client(srv.origin));
    expect(await get(client, '/a')).toBe('/a');
    await srv.conns[0]!.closed;
    expect(await get(client, '/b')).toBe('/b');
    expect(srv.conns).toHaveLength(2);
  });

  it('an HTTP/1.0 response with Connection: keep-alive keeps the socket', async () => {
    const srv = cleanup.add(
      await scriptServer((req) =>
        req.conn.socket.write(`HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: ${req.path.length}\r\n\r\n${req.path}`),
      ),
    );
    const client = cleanup.add(new Client(srv.origin));
    expect(await get(client, '/a')).toBe('/a');
    expect(await get(client, '/b')).toBe('/b');
    expect(srv.conns).toHaveLength(1);
  });
});

describe('maxRequestsPerClient', () => {
  it('closes a connection after that many requests, announcing it on the last one', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin, { maxRequestsPerClient: 2 }));
    for (const p of ['/1', '/2', '/3', '/4', '/5']) expect(await get(client, p)).toBe(p);
    expect(srv.conns.map((c) => c.requests.map((r) => r.path))).toEqual([['/1', '/2'], ['/3', '/4'], ['/5']]);
    expect(srv.conns[0]!.requests.map((r) => r.headers.connection)).toEqual(['keep-alive', 'close']);
    await srv.conns[0]!.closed;
    await srv.conns[1]!.closed;
  });

  it('0 (the default) means no limit', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    for (let i = 0; i < 20; i++) await get(client, `/${i}`);
    expect(srv.conns).toHaveLength(1);
  });
});
