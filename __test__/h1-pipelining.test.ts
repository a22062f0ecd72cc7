// Pipelining with undici's rules, watched from a raw server that answers by hand: what goes on the
// wire together, what waits, what is retried after the head of the pipeline fails, aborts, reset.
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Pool, errors } from '../ts/index.js';
import { Cleanup, ok, recorder, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

// Proving that a request was NOT sent needs a window in which it could have arrived. Requests the
// engine takes at once go out in the same write, so a short window is plenty.
const WINDOW = 60;

/** A raw server that answers nothing by itself: tests write each response when they choose. */
async function manualServer() {
  return cleanup.add(await scriptServer(() => {}));
}

describe('what may join a pipeline', () => {
  it('idempotent, non-blocking requests share one connection before any response', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const bodies = ['/a', '/b', '/c'].map((path) =>
      client.request({ path, method: 'GET', blocking: false }).then((r) => r.body.text()),
    );
    const third = await srv.request(2);
    // All three arrived before anything was answered.
    expect(srv.conns).toHaveLength(1);
    expect(srv.requests.map((r) => r.path)).toEqual(['/a', '/b', '/c']);
    third.conn.socket.write(ok('A') + ok('B') + ok('C'));
    expect(await Promise.all(bodies)).toEqual(['A', 'B', 'C']);
  });

  it('never more than `pipelining` in flight on a connection', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 2 }));
    const bodies = ['/a', '/b', '/c', '/d'].map((path) =>
      client.request({ path, method: 'GET', blocking: false }).then((r) => r.body.text()),
    );
    const second = await srv.request(1);
    await delay(WINDOW);
    expect(srv.requests).toHaveLength(2);
    second.conn.socket.write(ok('A'));
    // One answered → one more may go.
    await srv.request(2);
    await delay(WINDOW);
    expect(srv.requests).toHaveLength(3);
    second.conn.socket.write(ok('B') + ok('C'));
    const fourth = await srv.request(3);
    fourth.conn.socket.write(ok('D'));
    expect(await Promise.all(bodies)).toEqual(['A', 'B', 'C', 'D']);
    expect(srv.conns).toHaveLength(1);
  });

  it('a non-idempotent request waits until the pipeline is empty', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const c = client.request({ path: '/c', method: 'GET', blocking: false });
    const post = client.request({ path: '/post', method: 'POST', body: 'data', blocking: false });
    const second = await srv.request(1);
    await delay(WINDOW);
    expect(srv.requests.map((r) => r.path)).toEqual(['/a', '/c']);
    second.conn.socket.write(ok('A'));
    expect(await (await a).body.text()).toBe('A');
    await delay(WINDOW);
    // Still one request ahead of it.
    expect(srv.requests).toHaveLength(2);
    second.conn.socket.write(ok('C'));
    expect(await (await c).body.text()).toBe('C');
    const third = await srv.request(2);
    expect(third.method).toBe('POST');
    expect(third.body).toBe('data');
    expect(third.conn.index).toBe(0);
    third.conn.socket.write(ok('P'));
    expect(await (await post).body.text()).toBe('P');
  });

  it('only the non-idempotent request itself waits: an idempotent one may follow it', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const post = client.request({ path: '/post', method: 'POST', body: 'x', idempotent: false, blocking: false });
    const get = client.request({ path: '/get', method: 'GET', blocking: false });
    const first = await srv.request(0);
    // undici's rule holds back a non-idempotent request while others are in flight, not the
    // idempotent ones behind it.
    const second = await srv.request(1);
    expect(second.path).toBe('/get');
    first.conn.socket.write(ok('P') + ok('G'));
    expect(await (await post).body.text()).toBe('P');
    expect(await (await get).body.text()).toBe('G');
  });

  it('idempotent: true lets a POST join the pipeline', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const post = client.request({ path: '/post', method: 'POST', body: 'x', idempotent: true, blocking: false });
    const second = await srv.request(1);
    expect(second.method).toBe('POST');
    second.conn.socket.write(ok('A') + ok('P'));
    expect(await (await a).body.text()).toBe('A');
    expect(await (await post).body.text()).toBe('P');
  });

  it('a blocking request stops pipelining until its headers arrive, not until its body ends', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const a = client.request({ path: '/a', method: 'GET' }); // blocking by default
    const b = client.request({ path: '/b', method: 'GET', blocking: false });
    const first = await srv.request(0);
    await delay(WINDOW);
    expect(srv.requests).toHaveLength(1);
    // Headers only: pipelining may resume.
    first.conn.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nha');
    const resA = await a;
    const second = await srv.request(1);
    expect(second.path).toBe('/b');
    expect(second.conn.index).toBe(0);
    first.conn.socket.write('lf' + ok('B'));
    expect(await resA.body.text()).toBe('half');
    expect(await (await b).body.text()).toBe('B');
  });

  it('HEAD is not blocking by default: two HEADs go out together', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin, { pipelining: 2 }));
    const heads = [client.request({ path: '/1', method: 'HEAD' }), client.request({ path: '/2', method: 'HEAD' })];
    const second = await srv.request(1);
    second.conn.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n'.repeat(2));
    for (const h of await Promise.all(heads)) expect(await h.body.text()).toBe('');
  });

  it('an upgrade waits for an empty pipeline and nothing is pipelined behind it', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.headers.upgrade) {
          req.conn.socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: upgrade\r\n\r\n');
        } else if (req.path !== '/a') {
          req.conn.socket.write(ok('after'));
        }
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const up = client.upgrade({ path: '/ws', protocol: 'echo' });
    const after = client.request({ path: '/after', method: 'GET', blocking: false });
    const first = await srv.request(0);
    await delay(WINDOW);
    expect(srv.requests.map((r) => r.path)).toEqual(['/a']);
    first.conn.socket.write(ok('A'));
    expect(await (await a).body.text()).toBe('A');
    const { socket } = await up;
    expect(await (await after).body.text()).toBe('after');
    // The upgraded connection belongs to the user; the request behind it got its own.
    expect(srv.conns[0]!.requests.map((r) => r.path)).toEqual(['/a', '/ws']);
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/after']);
    socket.destroy();
  });

  it('CONNECT waits for an empty pipeline and nothing is pipelined behind it', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.method === 'CONNECT') req.conn.socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        else if (req.path !== '/a') req.conn.socket.write(ok('after'));
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const tunnel = client.connect({ path: 'example.com:443' });
    const after = client.request({ path: '/after', method: 'GET', blocking: false });
    const first = await srv.request(0);
    await delay(WINDOW);
    expect(srv.requests.map((r) => r.path)).toEqual(['/a']);
    first.conn.socket.write(ok('A'));
    expect(await (await a).body.text()).toBe('A');
    const { socket } = await tunnel;
    expect(await (await after).body.text()).toBe('after');
    expect(srv.conns[0]!.requests.map((r) => r.method)).toEqual(['GET', 'CONNECT']);
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/after']);
    socket.destroy();
  });
});

describe('when the head of the pipeline fails', () => {
  it('idempotent requests behind it are re-sent on a new connection (onRequestStart again)', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.conn.index === 0) {
          // Wait for the whole pipeline, then poison the first answer.
          if (req.n === 2) req.conn.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
        } else {
          req.conn.socket.write(ok(`retried ${req.path}`));
        }
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const recs = ['/a', '/b', '/c'].map((path) => {
      const [handler, rec] = recorder();
      client.dispatch({ path, method: 'GET', blocking: false }, handler);
      return rec;
    });
    await Promise.all(recs.map((r) => r.done));
    expect(recs[0]!.error).toBeInstanceOf(errors.HTTPParserError);
    expect(recs[1]!.events).toEqual(['start', 'start', 'head 200', 'end']);
    expect(recs[1]!.text()).toBe('retried /b');
    expect(recs[2]!.text()).toBe('retried /c');
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/b', '/c']);
  });

  it('a request with a stream body is not re-sent when its reused connection dies under it; a GET is', async () => {
    // These paths are taken and then answered by hanging up, once each.
    const hangUp = new Set(['/stream', '/get']);
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (hangUp.delete(req.path)) return void req.conn.socket.destroy();
        req.conn.socket.write(ok(`ok ${req.path}`));
      }),
    );
    const client = cleanup.add(new Client(srv.origin));
    expect(await (await client.request({ path: '/warm', method: 'GET' })).body.text()).toBe('ok /warm');
    const streamed = client.request({
      path: '/stream',
      method: 'PUT',
      idempotent: true,
      headers: { 'content-length': '4' },
      body: Readable.from(['da', 'ta']),
    });
    await expect(streamed).rejects.toBeInstanceOf(errors.SocketError);
    expect(srv.requests.filter((r) => r.path === '/stream')).toHaveLength(1);

    // Same situation with a GET: re-sent on a new connection, the caller never sees the failure.
    expect(await (await client.request({ path: '/warm2', method: 'GET' })).body.text()).toBe('ok /warm2');
    expect(await (await client.request({ path: '/get', method: 'GET' })).body.text()).toBe('ok /get');
    const gets = srv.requests.filter((r) => r.path === '/get');
    expect(gets).toHaveLength(2);
    expect(gets[0]!.conn).not.toBe(gets[1]!.conn);
  });
});

describe('aborting one request', () => {
  it('a queued request is dropped without touching the connection', async () => {
    const srv = await manualServer();
    const client = cleanup.add(new Client(srv.origin));
    const a = client.request({ path: '/a', method: 'GET' });
    const ac = new AbortController();
    const b = client.request({ path: '/b', method: 'GET', signal: ac.signal });
    const c = client.request({ path: '/c', method: 'GET' });
    const first = await srv.request(0);
    ac.abort();
    // Fails at once, while /a is still unanswered.
    await expect(b).rejects.toBeInstanceOf(errors.RequestAbortedError);
    first.conn.socket.write(ok('A'));
    expect(await (await a).body.text()).toBe('A');
    const next = await srv.request(1);
    expect(next.path).toBe('/c');
    next.conn.socket.write(ok('C'));
    expect(await (await c).body.text()).toBe('C');
    expect(srv.conns).toHaveLength(1);
    expect(srv.requests.map((r) => r.path)).toEqual(['/a', '/c']);
  });

  it('a request already on the wire takes the connection down; the others are re-sent', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.conn.index > 0) req.conn.socket.write(ok(`again ${req.path}`));
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const ac = new AbortController();
    const a = client.request({ path: '/a', method: 'GET', blocking: false });
    const b = client.request({ path: '/b', method: 'GET', blocking: false, signal: ac.signal });
    const c = client.request({ path: '/c', method: 'GET', blocking: false });
    await srv.request(2);
    ac.abort();
    await expect(b).rejects.toBeInstanceOf(errors.RequestAbortedError);
    // Its response would arrive in the middle of the pipeline: the connection cannot be kept.
    await srv.conns[0]!.closed;
    expect(await (await a).body.text()).toBe('again /a');
    expect(await (await c).body.text()).toBe('again /c');
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/a', '/c']);
  });
});

describe('reset', () => {
  it('reset: true sends connection: close and closes after the response even if the server would keep it', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/reset', method: 'GET', reset: true });
    expect(await res.body.text()).toBe('/reset');
    expect(srv.requests[0]!.headers.connection).toBe('close');
    await srv.conns[0]!.closed;
    const next = await client.request({ path: '/next', method: 'GET' });
    expect(await next.body.text()).toBe('/next');
    expect(srv.requests[1]!.headers.connection).toBe('keep-alive');
    expect(srv.conns).toHaveLength(2);
  });

  it('a `connection: close` header works as reset', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/x', method: 'GET', headers: { connection: 'close' } });
    await res.body.text();
    expect(srv.requests[0]!.head.match(/^connection:/gim)).toEqual(['connection:']);
    expect(srv.requests[0]!.headers.connection).toBe('close');
    await srv.conns[0]!.closed;
  });

  it('nothing is pipelined behind a reset request', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.path !== '/reset') req.conn.socket.write(ok(req.path));
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { pipelining: 3 }));
    const reset = client.request({ path: '/reset', method: 'GET', reset: true, blocking: false });
    const after = client.request({ path: '/after', method: 'GET', blocking: false });
    const first = await srv.request(0);
    await delay(WINDOW);
    expect(srv.requests).toHaveLength(1);
    first.conn.socket.write(ok('R'));
    expect(await (await reset).body.text()).toBe('R');
    expect(await (await after).body.text()).toBe('/after');
    expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/after']);
  });
});

describe('pool', () => {
  it('spreads a blocked pipeline over other connections', async () => {
    const srv = await manualServer();
    const pool = cleanup.add(new Pool(srv.origin, { connections: 2, pipelining: 3 }));
    const slow = pool.request({ path: '/slow', method: 'GET' });
    const fast = pool.request({ path: '/fast', method: 'GET' });
    await srv.request(1);
    // /slow is blocking: /fast cannot join its pipeline and takes the second connection.
    expect(new Set(srv.requests.map((r) => r.conn.index)).size).toBe(2);
    const byPath = new Map(srv.requests.map((r) => [r.path, r]));
    byPath.get('/fast')!.conn.socket.write(ok('F'));
    expect(await (await fast).body.text()).toBe('F');
    byPath.get('/slow')!.conn.socket.write(ok('S'));
    expect(await (await slow).body.text()).toBe('S');
  });
});
