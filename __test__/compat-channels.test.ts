// Diagnostics channel messages as undici publishes them (issue 35 item 27): over HTTP/2,
// undici:request:headers carries the response headers as a plain object (undici's client-h2 hands
// the request the session's header object), over HTTP/1.1 as the raw Buffer array.
import { afterEach, describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { Client } from '../ts/index.js';
import { ca, h2Server } from './fixtures/h2.js';
import { httpServer, listen } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** The `response.headers` of every lib:request:headers message (mirrored as undici:request:headers) while `run` runs. */
async function headersPublished(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const fn = (msg: unknown) => seen.push((msg as { response: { headers: unknown } }).response.headers);
  dc.subscribe('lib:request:headers', fn);
  try {
    await run();
  } finally {
    dc.unsubscribe('lib:request:headers', fn);
  }
  return seen;
}

describe('request:headers', () => {
  it('HTTP/2: response.headers is a plain object', async () => {
    const srv = cleanup.add(
      await h2Server((stream) => {
        stream.respond({ ':status': 200, 'x-one': 'a', 'set-cookie': ['a=1', 'b=2'] });
        stream.end('ok');
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { connect: { ca }, allowH2: true }));
    const seen = await headersPublished(async () => {
      const { body } = await client.request({ path: '/', method: 'GET' });
      await body.text();
    });
    expect(seen).toHaveLength(1);
    const headers = seen[0] as Record<string, unknown>;
    expect(Array.isArray(headers)).toBe(false);
    expect(headers['x-one']).toBe('a');
    expect(headers[':status']).toBeUndefined();
    expect(headers['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('HTTP/1.1: response.headers stays the raw Buffer array', async () => {
    const s = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const client = cleanup.add(new Client(s.origin));
    const seen = await headersPublished(async () => {
      const { body } = await client.request({ path: '/', method: 'GET' });
      await body.text();
    });
    expect(seen).toHaveLength(1);
    expect(Array.isArray(seen[0])).toBe(true);
    expect(Buffer.isBuffer((seen[0] as unknown[])[0])).toBe(true);
  });
});

describe('request:headers for CONNECT and upgrade answers (as undici publishes them)', () => {
  it('a CONNECT 200 and a 101 each publish their head', async () => {
    const server = createServer();
    server.on('connect', (_req, socket) => socket.end('HTTP/1.1 200 Connection established\r\n\r\n'));
    server.on('upgrade', (_req, socket) =>
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\n'),
    );
    const s = cleanup.add(await listen(server));
    const client = cleanup.add(new Client(s.origin));
    const seen = await headersPublished(async () => {
      (await client.connect({ path: 'example.com:443' })).socket.destroy();
      (await client.upgrade({ path: '/', protocol: 'foo' })).socket.destroy();
    });
    expect(seen).toHaveLength(2);
    const names = (seen[1] as Buffer[]).filter((_, i) => i % 2 === 0).map((b) => b.toString().toLowerCase());
    expect(names).toContain('upgrade');
  });
});
