// Callbacks and events run in the caller's async context (issue 35 item 19): undici binds request(),
// stream(), pipeline(), connect() and upgrade() callbacks and the response body's events to the
// caller through AsyncResource, so AsyncLocalStorage-based tracing sees the request's own store even
// when many requests share one connection and their engine events arrive in one batch.
import { afterEach, describe, expect, it } from 'vitest';
import { AsyncLocalStorage } from 'node:async_hooks';
import { once } from 'node:events';
import { Writable, type Duplex, type Readable } from 'node:stream';
import { Client } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const als = new AsyncLocalStorage<{ id: number }>();

/** The store a node-style callback sees when its call is made inside `als.run({ id })`. */
function storeInCallback<T>(
  id: number,
  call: (callback: (err: Error | null, data: T) => void) => void,
  release: (data: T) => void,
): Promise<number | undefined> {
  return new Promise((resolve, reject) =>
    als.run({ id }, () =>
      call((err, data) => {
        if (err) return reject(err);
        release(data);
        resolve(als.getStore()?.id);
      }),
    ),
  );
}

async function echoClient(pipelining = 1) {
  const s = cleanup.add(
    await httpServer((req, res) => {
      req.resume();
      res.end('hello ' + req.url);
    }),
  );
  return cleanup.add(new Client(s.origin, { pipelining }));
}

describe('request(): caller context', () => {
  it('the promise continuation and the body events see the caller store, many requests at once', async () => {
    const client = await echoClient(10);
    const runs = Array.from({ length: 20 }, (_, id) =>
      als.run({ id }, async () => {
        const seen: Array<number | undefined> = [];
        const { body } = await client.request({ path: '/' + id, method: 'GET' });
        seen.push(als.getStore()?.id);
        body.on('data', () => seen.push(als.getStore()?.id));
        await once(body, 'end');
        seen.push(als.getStore()?.id);
        return { id, seen };
      }),
    );
    for (const { id, seen } of await Promise.all(runs)) {
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(seen.every((s) => s === id)).toBe(true);
    }
  });

  it('the callback form sees the caller store', async () => {
    const client = await echoClient();
    const id = await storeInCallback(
      7,
      (cb) => client.request({ path: '/', method: 'GET' }, cb),
      (data: { body: Readable }) => data.body.resume(),
    );
    expect(id).toBe(7);
  });
});

describe('request(): body events arriving later', () => {
  it('data and end emitted from a later engine batch see the caller store', async () => {
    const responses: import('node:http').ServerResponse[] = [];
    const s = cleanup.add(
      await httpServer((req, res) => {
        req.resume();
        res.write('first');
        responses.push(res);
      }),
    );
    // Two connections: node:http answers pipelined requests one at a time.
    const runs = [1, 2].map((id) =>
      als.run({ id }, async () => {
        const client = cleanup.add(new Client(s.origin));
        const seen: Array<number | undefined> = [];
        const { body } = await client.request({ path: '/' + id, method: 'GET' });
        body.on('data', () => seen.push(als.getStore()?.id));
        const ended = once(body, 'end').then(() => seen.push(als.getStore()?.id));
        return { id, seen, ended };
      }),
    );
    const started = await Promise.all(runs);
    while (responses.length < 2) await new Promise((r) => setImmediate(r));
    // Outside any store: the later chunks are written and read by the engine with no caller around.
    await new Promise((r) => setImmediate(r));
    for (const res of responses) res.end('second');
    for (const { id, seen, ended } of started) {
      await ended;
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual(seen.map(() => id));
    }
  });
});

describe('connect() and upgrade(): caller context', () => {
  it('the connect callback sees the caller store', async () => {
    const { createServer } = await import('node:http');
    const server = createServer();
    server.on('connect', (_req, socket) => socket.end('HTTP/1.1 200 Connection established\r\n\r\n'));
    const { listen } = await import('./fixtures/servers.js');
    const s = cleanup.add(await listen(server));
    const client = cleanup.add(new Client(s.origin));
    const id = await storeInCallback(
      11,
      (cb) => client.connect({ path: 'example.com:443' }, cb),
      (data: { socket: Duplex }) => data.socket.destroy(),
    );
    expect(id).toBe(11);
  });

  it('the upgrade callback sees the caller store', async () => {
    const { createServer } = await import('node:http');
    const server = createServer();
    server.on('upgrade', (_req, socket) =>
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\n'),
    );
    const { listen } = await import('./fixtures/servers.js');
    const s = cleanup.add(await listen(server));
    const client = cleanup.add(new Client(s.origin));
    const id = await storeInCallback(
      12,
      (cb) => client.upgrade({ path: '/', protocol: 'foo' }, cb),
      (data: { socket: Duplex }) => data.socket.destroy(),
    );
    expect(id).toBe(12);
  });
});

describe('stream(): caller context', () => {
  it('the factory and the callback see the caller store', async () => {
    const client = await echoClient();
    const seen: Array<number | undefined> = [];
    await new Promise<void>((resolve, reject) =>
      als.run({ id: 3 }, () =>
        client.stream(
          { path: '/', method: 'GET' },
          () => {
            seen.push(als.getStore()?.id);
            return new Writable({ write: (_c, _e, cb) => cb() });
          },
          (err) => {
            seen.push(als.getStore()?.id);
            if (err) reject(err);
            else resolve();
          },
        ),
      ),
    );
    expect(seen).toEqual([3, 3]);
  });
});
