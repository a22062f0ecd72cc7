// When 'disconnect' comes, relative to the response body's 'end', and with what error (issue 35
// item 11): a Keep-Alive hint at or below keepAliveTimeoutThreshold leaves the connection unfit
// for reuse, so it closes once the response is done, after the body's 'end' has been emitted; so
// does one whose response came before its request body was all sent.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, errors } from '../ts/index.js';
import { Readable } from 'node:stream';
import { Cleanup } from './fixtures/h1.js';
import { httpServer, rawServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A raw server answering every connection with one keep-alive response carrying `hint`. */
async function hinting(hint: string): Promise<string> {
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 0\r\nKeep-Alive: ${hint}\r\nConnection: keep-alive\r\n\r\n`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.defer(() => new Promise<void>((r) => {
    for (const s of sockets) s.destroy();
    server.close(() => r());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Reads `body` out: its 'end' comes first, then 'disconnect' with InformationalError 'reset'. */
async function expectResetAfterEnd(client: Client, body: Readable): Promise<void> {
  const order: string[] = [];
  const disconnected = new Promise<unknown>((resolve) =>
    client.on('disconnect', (_o, _t, err) => {
      order.push('disconnect');
      resolve(err);
    }),
  );
  body.on('end', () => order.push('end'));
  body.resume();
  const err = await disconnected;
  expect(order).toEqual(['end', 'disconnect']);
  expect(err).toBeInstanceOf(errors.InformationalError);
  expect((err as Error).message).toBe('reset');
}

describe("'disconnect' after the body's 'end'", () => {
  for (const [name, hint, opts] of [
    ['a hint below the default threshold', 'timeout=1s', {}],
    ['a hint equal to the threshold', 'timeout=1s', { keepAliveTimeoutThreshold: 1000 }],
  ] as const) {
    it(name, async () => {
      const origin = await hinting(hint);
      const client = cleanup.add(new Client(origin, opts));
      const { body } = await client.request({ path: '/', method: 'GET' });
      await expectResetAfterEnd(client, body);
    });
  }
});

describe('a response done before its request body was sent', () => {
  /** A server that answers at once, without reading the body; `close` then ends its side too. */
  async function answeringEarly(close: boolean): Promise<string> {
    if (!close) {
      const srv = await httpServer((_req, res) => res.end());
      cleanup.defer(() => srv.close());
      return srv.origin;
    }
    const srv = await rawServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
    });
    cleanup.defer(() => srv.close());
    return srv.origin;
  }

  for (const [name, close, chunk] of [
    ['the server keeps the connection (undici\'s test: GET with a body that never ends)', false, 'asd'],
    ['the server closes its side while 1 MiB chunks wait to be written', true, 'x'.repeat(1 << 20)],
  ] as const) {
    it(name, async () => {
      const client = cleanup.add(new Client(await answeringEarly(close)));
      // A body that never ends: only the server's early answer can finish this request.
      const source = new Readable({
        read() {
          this.push(chunk);
        },
      });
      const { body } = await client.request({ path: '/', method: 'GET', body: source });
      await expectResetAfterEnd(client, body);
      expect(source.destroyed).toBe(false);
    });
  }
});
