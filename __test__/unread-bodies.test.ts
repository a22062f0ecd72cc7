// Response bodies nobody reads (request()): one that is garbage-collected unread releases its
// connection, so a pool never runs dry; one that is still referenced keeps its data.
//
// Each scenario runs in a child process with `gc()` exposed (fixtures/child-gc.ts). Its server
// sends the first 128 KiB of each body at once and the rest only once the client holds more than
// the body's 64 KiB high-water mark: the client has paused the response by then, so the engine
// cannot have read it to the end before the pause (which, before the fix, was the only way such a
// request ever finished). A request that makes no progress for 5 s is a stall.
import { describe, expect, it } from 'vitest';
import { useChildRuns } from './fixtures/child-run.js';
import { GC_PRELUDE } from './fixtures/child-gc.js';

const runChild = useChildRuns();

/**
 * In scope for a scenario: `serve(first, total, protocol)` starts an HTTP/1.1 or h2c server
 * (resolves to its origin) and counts its `connections`; `unread(dispatcher, path)` makes a request, waits until its body is
 * paused and lets the server send the rest, then drops the body; `unreadMany(dispatcher, count,
 * callers)` does that `count` times from `callers` concurrent loops, each request allowed 5 s;
 * `finish(dispatcher, result)` destroys the dispatcher and prints the outcome. A full collection
 * runs every 25 ms throughout.
 */
const SCENARIO = `${GC_PRELUDE}
  const http = await import('node:http');
  const http2 = await import('node:http2');
  let first = null;
  let rest = null;
  let connections = 0;
  const sockets = new Set();
  const waiting = new Map();
  const h1 = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': first.length + rest.length });
    res.write(first);
    waiting.set(req.url, res);
  });
  const h2c = http2.createServer();
  h2c.on('stream', (stream, headers) => {
    // Torn down with its session when the scenario ends.
    stream.on('error', () => {});
    stream.respond({ ':status': 200, 'content-length': first.length + rest.length });
    stream.write(first);
    waiting.set(headers[':path'], stream);
  });
  let server = h1;
  async function serve(firstBytes, total, protocol = 'h1') {
    first = Buffer.alloc(firstBytes, 97);
    rest = Buffer.alloc(total - firstBytes, 98);
    server = protocol === 'h2c' ? h2c : h1;
    server.on('connection', (socket) => {
      connections++;
      sockets.add(socket);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return 'http://127.0.0.1:' + server.address().port;
  }
  async function paused(body) {
    // Past its 64 KiB high-water mark: the client paused the response as the chunk went in.
    while (body.readableLength <= 64 * 1024 && !finished) await new Promise(setImmediate);
  }
  function sendRest(path) {
    waiting.get(path).end(rest);
    waiting.delete(path);
  }
  // A function of its own: a suspended async function may keep even its dead locals alive.
  async function unread(dispatcher, path) {
    const { body } = await dispatcher.request({ path, method: 'GET' });
    await paused(body);
    sendRest(path);
  }
  function within(promise) {
    let timer;
    const stall = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('stalled')), 5000);
    });
    return Promise.race([promise, stall]).finally(() => clearTimeout(timer));
  }
  async function unreadMany(dispatcher, count, callers) {
    let completed = 0;
    let next = 0;
    try {
      await Promise.all(Array.from({ length: callers }, async () => {
        while (next < count) {
          await within(unread(dispatcher, '/' + next++));
          completed++;
        }
      }));
      return { completed };
    } catch (err) {
      return { completed, error: err.message };
    }
  }
  const collector = setInterval(() => gc(), 25);
  // Ends the waits of requests that stalled, so the child can exit.
  let finished = false;
  async function finish(dispatcher, result) {
    finished = true;
    await dispatcher.destroy();
    clearInterval(collector);
    for (const socket of sockets) socket.destroy();
    server.close();
    console.log(JSON.stringify({ ...result, connections }));
  }
`;

interface Outcome {
  completed: number;
  connections: number;
  error?: string;
}

async function scenario(body: string): Promise<Outcome> {
  const run = await runChild(undefined, '', `${SCENARIO}\n${body}`);
  return JSON.parse(run.stdout) as Outcome;
}

describe('response bodies nobody reads', () => {
  it('one connection: each body collected unread gives the connection back; the rest is discarded, not the socket', async () => {
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 256 * 1024);
      const client = new ferro.Client(origin);
      await finish(client, await unreadMany(client, 12, 1));
    `);
    expect(outcome).toEqual({ completed: 12, connections: 1 });
  });

  it('a Pool of 2 connections under 8 concurrent callers completes every request', async () => {
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 256 * 1024);
      const pool = new ferro.Pool(origin, { connections: 2 });
      await finish(pool, await unreadMany(pool, 24, 8));
    `);
    expect(outcome).toEqual({ completed: 24, connections: 2 });
  });

  it('HTTP/2 (h2c): each stream whose body is collected unread is released; the session goes on', async () => {
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 256 * 1024, 'h2c');
      const client = new ferro.Client(origin, { h2Options: { useH2c: true } });
      await finish(client, await unreadMany(client, 12, 1));
    `);
    expect(outcome).toEqual({ completed: 12, connections: 1 });
  });

  it('a collected body with more than 64 KiB still to come aborts its request; the next one gets a new connection', async () => {
    // 64 MiB: far more than the engine can have read ahead (its event queue and the socket
    // buffers) by the time the abort reaches it.
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 64 * 1024 * 1024);
      const client = new ferro.Client(origin);
      await finish(client, await unreadMany(client, 3, 1));
    `);
    expect(outcome).toEqual({ completed: 3, connections: 3 });
  });

  it('a paused body that is still referenced keeps all its data through collections', async () => {
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 256 * 1024);
      const client = new ferro.Client(origin);
      const { body } = await client.request({ path: '/kept', method: 'GET' });
      await paused(body);
      sendRest('/kept');
      // Collections, with turns for finalizers in between, while the body waits unread.
      for (let i = 0; i < 10; i++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const text = await within(body.text());
      const completed = text.length === 256 * 1024 && text.endsWith('b'.repeat(128 * 1024)) ? 1 : 0;
      // The same connection serves the next request: the kept body was read to its end.
      await within(unread(client, '/after'));
      await finish(client, { completed: completed + 1 });
    `);
    expect(outcome).toEqual({ completed: 2, connections: 1 });
  });

  it('a paused body whose text() is pending is kept alive by the read, with nothing else referencing it', async () => {
    const outcome = await scenario(`
      const origin = await serve(128 * 1024, 256 * 1024);
      const client = new ferro.Client(origin);
      async function startReading(path) {
        const { body } = await client.request({ path, method: 'GET' });
        await paused(body);
        return { text: body.text() };
      }
      const { text } = await startReading('/read');
      // Only the read refers to the body now, and the rest of it has not been sent yet.
      for (let i = 0; i < 10; i++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      sendRest('/read');
      const read = await within(text);
      await finish(client, { completed: read.length === 256 * 1024 ? 1 : 0 });
    `);
    expect(outcome).toEqual({ completed: 1, connections: 1 });
  });
});
