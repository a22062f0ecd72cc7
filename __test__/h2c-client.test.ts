// H2CClient (ts/dispatcher/h2c-client.ts): HTTP/2 by prior knowledge to an http: origin, against
// node:http2's plain server; what it refuses at construction, as undici's H2CClient. Cases follow
// undici's test/h2c-client.js.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Http2Server, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors, H2CClient } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { listen } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function h2cServer(onStream: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void, settings?: { maxConcurrentStreams: number }, path?: string): Promise<{ server: Http2Server; origin: string }> {
  const server = createServer(settings ? { settings } : {});
  server.on('stream', onStream);
  return cleanup.add(await listen(server, path));
}

describe('H2CClient', () => {
  it('speaks HTTP/2 without TLS: one session, many streams, bodies both ways', async () => {
    const sessions: unknown[] = [];
    const seen: IncomingHttpHeaders[] = [];
    const { server, origin } = await h2cServer((stream, headers) => {
      seen.push(headers);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'x-path': headers[':path'] as string });
        stream.end(`${headers[':method']} ${headers[':path']} ${Buffer.concat(chunks).toString()}`);
      });
    });
    server.on('session', (s) => sessions.push(s));
    const client = cleanup.add(new H2CClient(origin));
    const results = await Promise.all(
      ['/a', '/b', '/c'].map(async (path) => {
        const res = await client.request({ path, method: 'POST', body: `body of ${path}` });
        return [res.statusCode, res.headers['x-path'], await res.body.text()];
      }),
    );
    expect(results).toEqual([
      [200, '/a', 'POST /a body of /a'],
      [200, '/b', 'POST /b body of /b'],
      [200, '/c', 'POST /c body of /c'],
    ]);
    expect(sessions).toHaveLength(1);
    expect(seen.map((h) => h[':scheme'])).toEqual(['http', 'http', 'http']);
  });

  it("queues requests above the server's SETTINGS_MAX_CONCURRENT_STREAMS", async () => {
    let active = 0;
    let maxActive = 0;
    const paths: string[] = [];
    const { origin } = await h2cServer(
      (stream, headers) => {
        active++;
        maxActive = Math.max(maxActive, active);
        paths.push(headers[':path'] as string);
        stream.respond({ ':status': 200 });
        // The next stream may open only once this one has ended: end it on the next turn.
        setImmediate(() => {
          active--;
          stream.end('ok');
        });
      },
      { maxConcurrentStreams: 1 },
    );
    const client = cleanup.add(new H2CClient(origin, { maxConcurrentStreams: 10, pipelining: 10 }));
    const bodies = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await client.request({ path: `/${i}`, method: 'GET' })).body.text()));
    expect(bodies).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(maxActive).toBe(1);
    expect(paths.sort()).toEqual(['/0', '/1', '/2', '/3', '/4']);
  });

  it('runs over a unix socket, with the authority of the origin', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferro-h2c-'));
    cleanup.defer(() => rm(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'server.sock');
    let authority: unknown;
    const { origin } = await h2cServer(
      (stream, headers) => {
        authority = headers[':authority'];
        stream.respond({ ':status': 200 });
        stream.end('over uds');
      },
      undefined,
      socketPath,
    );
    const client = cleanup.add(new H2CClient(origin, { socketPath }));
    const res = await client.request({ path: '/', method: 'GET' });
    expect([res.statusCode, await res.body.text(), authority]).toEqual([200, 'over uds', 'localhost']);
  });

  it('stays h2c whatever h2Options say', async () => {
    const { origin } = await h2cServer((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('h2');
    });
    const client = cleanup.add(new H2CClient(origin, { h2Options: { useH2c: false } }));
    expect(await (await client.request({ path: '/', method: 'GET' })).body.text()).toBe('h2');
  });

  it('refuses what undici refuses, with InvalidArgumentError', () => {
    const cases: [() => unknown, string][] = [
      [() => new H2CClient('https://localhost/'), 'h2c-client: Only h2c protocol is supported'],
      [() => new H2CClient(new URL('https://localhost/')), 'h2c-client: Only h2c protocol is supported'],
      [() => new H2CClient('http://localhost/', { pipelining: 10, maxConcurrentStreams: 5 }), 'h2c-client: pipelining cannot be greater than maxConcurrentStreams'],
      [() => new H2CClient('http://localhost/', { maxConcurrentStreams: 0 }), 'maxConcurrentStreams must be a positive integer, greater than 0'],
      [() => new H2CClient('http://localhost/', { maxConcurrentStreams: 1.5 }), 'maxConcurrentStreams must be a positive integer, greater than 0'],
      [() => new H2CClient('http://localhost/', { maxConcurrentStreams: {} as number }), 'maxConcurrentStreams must be a positive integer, greater than 0'],
      // The default pipelining (100) is above 50 streams, as in undici.
      [() => new H2CClient('http://localhost/', { maxConcurrentStreams: 50 }), 'h2c-client: pipelining cannot be greater than maxConcurrentStreams'],
    ];
    for (const [make, message] of cases) expect(make).toThrow(new errors.InvalidArgumentError(message));
    expect(() => new H2CClient('ftp://localhost/')).toThrow(new errors.InvalidArgumentError('h2c-client: Only h2c protocol is supported'));
    // A string that is no URL at all: node's TypeError, as undici (and ferro's Client).
    expect(() => new H2CClient('not a url')).toThrow(TypeError);
    // A pipelining that is not a positive integer means the default, as in undici.
    cleanup.add(new H2CClient('http://localhost/', { pipelining: 0 }));
  });

  it('fails a request to a server that does not speak h2c, and closes', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const http1 = createHttpServer((_req, res) => res.end('h1 only'));
    http1.listen(0, '127.0.0.1');
    await once(http1, 'listening');
    cleanup.defer(() => new Promise<void>((resolve) => http1.close(() => resolve())));
    http1.on('connection', (s: Socket) => cleanup.defer(async () => void s.destroy()));
    const client = new H2CClient(`http://127.0.0.1:${(http1.address() as AddressInfo).port}`);
    const err = await client.request({ path: '/', method: 'GET' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    await client.close();
  });
});
