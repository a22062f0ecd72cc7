// HTTP/2 without TLS (`h2Options.useH2c`, prior knowledge) against node:http2's plain server, and
// what happens when the server on the other end does not speak HTTP/2 at all.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createH2Server } from 'node:http2';
import { createServer as createNetServer } from 'node:net';
import { Client, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';
import { listen } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('h2c (HTTP/2 by prior knowledge)', () => {
  it('speaks HTTP/2 to a plain http: origin when useH2c is set, under h2Options or at top level', async () => {
    const h2 = createH2Server((req, res) => res.end(`${req.httpVersion} ${req.url}`));
    const sessions: unknown[] = [];
    h2.on('session', (s) => sessions.push(s));
    const srv = cleanup.add(await listen(h2));
    const nested = cleanup.add(new Client(srv.origin, { h2Options: { useH2c: true } }));
    const res = await nested.request({ path: '/nested', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('2.0 /nested');
    const top = cleanup.add(new Client(srv.origin, { useH2c: true } as ConstructorParameters<typeof Client>[1]));
    expect(await (await top.request({ path: '/top', method: 'GET' })).body.text()).toBe('2.0 /top');
    expect(sessions).toHaveLength(2);
  });

  it('a server that answers the h2c preface in HTTP/1.1 fails the request, never hangs or reconnects without end', async () => {
    let connections = 0;
    const raw = createNetServer((socket) => {
      connections++;
      socket.on('error', () => {});
      socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
    const srv = cleanup.add(await listen(raw));
    const c = cleanup.add(new Client(srv.origin, { h2Options: { useH2c: true } }));
    const err = await c.request({ path: '/', method: 'GET' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect((err as Error).message).toMatch(/^HTTP\/2: /);
    expect(connections).toBeLessThanOrEqual(4);
  });
});
