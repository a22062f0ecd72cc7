// unconsumedBodyTimeout: a request() body no one starts reading within the dispatcher's timeout
// (counted from the response head) is let go, its rest discarded (up to 64 KiB) or its connection
// closed, so the connection goes back to the pool; a read that comes later fails.
//
// The server sends more than the body's 64 KiB high-water mark, so the client pauses the response
// and, without the timeout, only a garbage collection of the body would ever free the connection.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Agent, Client, Pool, errors, interceptors } from '../ts/index.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns, lines } from './fixtures/child-run.js';
import type { Server } from 'node:http';
import { GC_PRELUDE } from './fixtures/child-gc.js';

const cleanup = useCleanup();
const runChild = useChildRuns();

/**
 * 96 KiB (paused past 64 KiB; its last 16 KiB sent late and drained) or 8 MiB (too much left: the
 * connection closes).
 */
const SIZES: Record<string, number> = { '/drain': 96 * 1024, '/close': 8 * 1024 * 1024 };

async function serve(): Promise<Running<Server> & { connections: () => number }> {
  let connections = 0;
  const running = await httpServer((req, res) => {
    const size = SIZES[req.url!.split('?')[0]!] ?? 2;
    res.writeHead(200, { 'content-length': size });
    if (size !== SIZES['/drain']) return void res.end(Buffer.alloc(size, 97));
    // The last 16 KiB comes after the tests' timeouts: the request is still in flight then.
    res.write(Buffer.alloc(size - 16 * 1024, 97));
    setTimeout(() => res.end(Buffer.alloc(16 * 1024, 97)), 150);
  });
  running.server.on('connection', () => connections++);
  cleanup.track(running);
  return { ...running, connections: () => connections };
}

/** Rejects with 'stalled' when `promise` takes longer than 5 s. */
function within<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stall = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('stalled')), 5000);
  });
  return Promise.race([promise, stall]).finally(() => clearTimeout(timer));
}

/**
 * Resolves once a body left unread under `timeout`, on a client of its own, was let go (its
 * connection closed, so the next request gets through): by then every deadline of `timeout` that
 * began earlier has passed and been checked. A wait on an event rather than on the clock.
 */
async function timeoutElapsed(server: Running<Server>, timeout: number): Promise<void> {
  const control = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: timeout }));
  await control.request({ path: '/close', method: 'GET' });
  await within(control.request({ path: '/small', method: 'GET' }));
}

describe('unconsumedBodyTimeout', () => {
  it('releases the connection of a body never read: the rest is drained and the connection reused', async () => {
    const server = await serve();
    const client = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: 50 }));
    const first = await client.request({ path: '/drain', method: 'GET' });
    const second = await within(client.request({ path: '/small', method: 'GET' }));
    expect(await second.body.text()).toBe('aa');
    expect(server.connections()).toBe(1);
    // Read after the release: an error that says why, never a short body.
    const err = await first.body.text().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect((err as Error).message).toMatch(/not read within unconsumedBodyTimeout \(50 ms\)/);
  });

  it('closes the connection when more than 64 KiB is still to come; the next request gets a new one', async () => {
    const server = await serve();
    const client = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: 50 }));
    const first = await client.request({ path: '/close', method: 'GET' });
    const second = await within(client.request({ path: '/small', method: 'GET' }));
    expect(await second.body.text()).toBe('aa');
    expect(server.connections()).toBe(2);
    // Iterating it later fails too.
    await expect(
      (async () => {
        for await (const chunk of first.body) void chunk;
      })(),
    ).rejects.toThrow(errors.RequestAbortedError);
  });

  it('leaves a body alone once someone reads it, however slowly', async () => {
    const server = await serve();
    const client = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: 20 }));
    const { body } = await client.request({ path: '/drain', method: 'GET' });
    body.pause();
    // Past the timeout, with the stream side in use (paused) but nothing read yet.
    await timeoutElapsed(server, 20);
    let length = 0;
    body.on('data', (chunk: Buffer) => (length += chunk.length));
    body.resume();
    await once(body, 'end');
    expect(length).toBe(96 * 1024);
  });

  it.each(['redirect', 'decompress'] as const)('reaches request() through the %s interceptor', async (name) => {
    const server = await serve();
    const client = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: 50 }));
    const composed = client.compose(interceptors[name]());
    const first = await composed.request({ path: '/drain', method: 'GET' });
    const second = await within(composed.request({ path: '/small', method: 'GET' }));
    expect(await second.body.text()).toBe('aa');
    await expect(first.body.text()).rejects.toThrow(errors.RequestAbortedError);
  });

  it('0 turns it off: the body keeps every byte', async () => {
    const server = await serve();
    const client = cleanup.track(new Client(server.origin, { unconsumedBodyTimeout: 0 }));
    const { body } = await client.request({ path: '/drain', method: 'GET' });
    // Until a body left unread under a 20 ms timeout was let go.
    await timeoutElapsed(server, 20);
    expect((await body.text()).length).toBe(96 * 1024);
  });

  it('Pool and Agent pass it on to their clients', async () => {
    const server = await serve();
    for (const dispatcher of [
      new Pool(server.origin, { connections: 1, unconsumedBodyTimeout: 50 }),
      new Agent({ connections: 1, unconsumedBodyTimeout: 50 }),
    ]) {
      cleanup.track(dispatcher);
      await dispatcher.request({ origin: server.origin, path: '/drain', method: 'GET' });
      const second = await within(dispatcher.request({ origin: server.origin, path: '/small', method: 'GET' }));
      expect(await second.body.text()).toBe('aa');
    }
  });

  it.each([-1, 'x', Number.NaN, Infinity])('refuses unconsumedBodyTimeout %s with InvalidArgumentError', (value) => {
    const opts = { unconsumedBodyTimeout: value as number };
    expect(() => new Client('http://127.0.0.1:1', opts)).toThrow(errors.InvalidArgumentError);
    expect(() => new Client('http://127.0.0.1:1', opts)).toThrow('invalid unconsumedBodyTimeout');
    expect(() => new Pool('http://127.0.0.1:1', opts)).toThrow(errors.InvalidArgumentError);
  });

  it('writes a NODE_DEBUG=lib line naming the method and path', async () => {
    const server = await serve();
    const run = await runChild(
      'lib',
      server.origin,
      `
      const client = new ferro.Client(origin, { unconsumedBodyTimeout: 30 });
      // Kept, so that the timeout, not a collection, lets it go.
      const first = await client.request({ path: '/drain?q=1', method: 'GET' });
      const second = await client.request({ path: '/small', method: 'GET' });
      await second.body.text();
      console.log(await first.body.text().catch((err) => err.code));
      await client.close();
      `,
    );
    expect(run.stdout).toBe('UND_ERR_ABORTED\n');
    const released = lines(run).filter((l) => l.includes('unconsumedBodyTimeout'));
    expect(released).toEqual([
      `LIB ${run.pid}: GET /drain?q=1: response body not read within unconsumedBodyTimeout (30 ms); discarding the rest to keep its connection`,
    ]);
  });

  it('2,000 requests whose bodies are never read leave the pool usable and memory bounded', async () => {
    // In a child, for a clean RSS. Each body is 8 KiB, its first half sent at once (past the
    // request's 1 KiB high-water mark, so the client pauses it) and its rest 30 ms later, after
    // the 10 ms timeout: every request holds its connection until the timeout lets it go.
    const run = await runChild(
      undefined,
      '',
      `${GC_PRELUDE}
      const http = await import('node:http');
      let connections = 0;
      const server = http.createServer((req, res) => {
        res.writeHead(200, { 'content-length': 8192 });
        if (req.url === '/read') return void res.end(Buffer.alloc(8192, 97));
        res.write(Buffer.alloc(4096, 97));
        setTimeout(() => res.end(Buffer.alloc(4096, 98)), 30);
      });
      server.on('connection', () => connections++);
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const pool = new ferro.Pool('http://127.0.0.1:' + server.address().port, { connections: 50, unconsumedBodyTimeout: 10 });
      async function unread(count) {
        let next = 0;
        await Promise.all(Array.from({ length: 100 }, async () => {
          while (next++ < count) {
            const { statusCode } = await pool.request({ path: '/', method: 'GET', highWaterMark: 1024 });
            if (statusCode !== 200) throw new Error('status ' + statusCode);
          }
        }));
      }
      await unread(200);
      gc();
      const before = process.memoryUsage();
      const started = performance.now();
      await unread(2000);
      const ms = performance.now() - started;
      gc();
      const after = process.memoryUsage();
      const growth = after.rss - before.rss;
      const heapGrowth = after.heapUsed - before.heapUsed;
      const { body } = await pool.request({ path: '/read', method: 'GET' });
      const read = (await body.text()).length;
      await pool.close();
      server.close();
      console.log(JSON.stringify({ growth, heapGrowth, ms, read, connections }));
      `,
    );
    const outcome = JSON.parse(run.stdout) as { growth: number; heapGrowth: number; ms: number; read: number; connections: number };
    const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
    console.log(`2,000 unread bodies: RSS +${mib(outcome.growth)} MiB, heap +${mib(outcome.heapGrowth)} MiB, ${outcome.ms.toFixed(0)} ms`);
    expect(outcome.read).toBe(8192);
    // Drained, not closed: the pool's connections served every request.
    expect(outcome.connections).toBeLessThanOrEqual(50);
    // The heap holds nothing of the 2,000 requests; RSS moves with the allocator's own caching
    // (measured: +17 to +32 MiB over 2,000 to 8,000 requests), so its bound is loose.
    expect(outcome.heapGrowth).toBeLessThan(4 * 2 ** 20);
    expect(outcome.growth).toBeLessThan(64 * 2 ** 20);
  }, 30_000);
});
