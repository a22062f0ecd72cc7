// The streamed request-body pump (issue 11, item 2): it yields to the event loop for sources that
// are always ready, stops when the response ends or fails, releases the source (a stream whose
// response completed first is left to its owner: request-body-streams.test.ts), and reports a
// source error as a failed request before anything was written, as an aborted one after.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { rawServer, readUntil } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
const track = <T extends { close(): Promise<unknown> }>(x: T): T => cleanup.add(x);

/** Answers every request at once, after its head, without waiting for the body (which it reads). */
async function earlyAnswer() {
  return track(
    await rawServer((socket) => {
      socket.on('error', () => {});
      socket.on('data', () => {});
      void readUntil(socket, (t) => t.includes('\r\n\r\n')).then(() => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      });
    }),
  );
}

describe('always-ready body sources', () => {
  it('an endless generator whose response ends early: the request completes and the generator is closed', async () => {
    const srv = await earlyAnswer();
    const client = track(new Client(srv.origin));
    // Ends the "endless" source after this many chunks, so a pump that never yields fails the
    // test instead of hanging the worker.
    const CAP = 3_000_000;
    let produced = 0;
    let closed = false;
    const one = Buffer.from('x');
    function* endless(): Generator<Buffer> {
      try {
        while (produced < CAP) {
          produced++;
          yield one;
        }
      } finally {
        closed = true;
      }
    }
    const res = await client.request({ path: '/', method: 'POST', body: endless() });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    while (!closed) await new Promise((r) => setImmediate(r));
    expect(produced).toBeLessThan(CAP);
  });

  it('the pump lets timers run while it feeds an always-ready source', async () => {
    const srv = await earlyAnswer();
    const client = track(new Client(srv.origin));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    let ticksSeenByBody = -1;
    function* watching(): Generator<Buffer> {
      for (let i = 0; i < 2000; i++) {
        if (ticks > 0 && ticksSeenByBody < 0) ticksSeenByBody = i;
        yield Buffer.alloc(16, 'y');
      }
    }
    try {
      const res = await client.request({ path: '/', method: 'POST', body: watching() });
      await res.body.text();
    } finally {
      clearInterval(timer);
    }
    // A timer ran while the generator was still being read.
    expect(ticksSeenByBody).toBeGreaterThan(0);
  });
});

describe('releasing the source', () => {
  it('a Readable body is destroyed when the request fails', async () => {
    const srv = track(await rawServer((s) => s.destroy()));
    const client = track(new Client(srv.origin));
    const body = new Readable({ read() {} });
    body.push('x');
    await expect(client.request({ path: '/', method: 'POST', body })).rejects.toBeInstanceOf(errors.SocketError);
    if (!body.destroyed) await once(body, 'close');
    expect(body.destroyed).toBe(true);
  });
});

describe('a failing source', () => {
  it('before anything was written: the request fails with that error and nothing reaches the wire', async () => {
    const heads: string[] = [];
    let headArrived: (() => void) | null = null;
    const srv = track(
      await rawServer((socket) => {
        socket.on('error', () => {});
        let text = '';
        socket.on('data', (c: Buffer) => {
          text += c.toString('latin1');
          let end: number;
          while ((end = text.indexOf('\r\n\r\n')) !== -1) {
            heads.push(text.slice(0, end));
            text = text.slice(end + 4);
            socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
            headArrived?.();
          }
        });
      }),
    );
    const client = track(new Client(srv.origin));
    // A kept-alive connection is ready, so a head handed to the engine would go out at once.
    await (await client.request({ path: '/warm', method: 'GET' })).body.text();
    const boom = new Error('source failed');
    async function* failing(): AsyncGenerator<Buffer> {
      await new Promise((r) => setImmediate(r));
      throw boom;
    }
    await expect(client.request({ path: '/', method: 'POST', body: failing() })).rejects.toBe(boom);
    const next = new Promise<void>((r) => (headArrived = r));
    const second = await client.request({ path: '/second', method: 'GET' });
    await second.body.text();
    await next;
    expect(heads.map((h) => h.split('\r\n')[0])).toEqual(['GET /warm HTTP/1.1', 'GET /second HTTP/1.1']);
  });

  it('after some of it was written: the request is aborted with that error and its connection closed', async () => {
    let gotPart!: () => void;
    const part = new Promise<void>((r) => (gotPart = r));
    let closed!: () => void;
    const socketClosed = new Promise<void>((r) => (closed = r));
    const srv = track(
      await rawServer((socket) => {
        socket.on('error', () => {});
        let text = '';
        socket.on('data', (c: Buffer) => {
          text += c.toString('latin1');
          if (text.includes('part')) gotPart();
        });
        socket.on('close', () => closed());
      }),
    );
    const client = track(new Client(srv.origin));
    const boom = new Error('source failed midway');
    async function* halfway(): AsyncGenerator<Buffer> {
      yield Buffer.from('part');
      await part;
      throw boom;
    }
    await expect(client.request({ path: '/', method: 'POST', body: halfway() })).rejects.toBe(boom);
    await socketClosed;
  });
});
