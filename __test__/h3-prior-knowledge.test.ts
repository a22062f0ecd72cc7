// HTTP/3 with prior knowledge (`h3Options.priorKnowledge`): straight to QUIC, no TCP, against the
// Rust test server (crates/h3-test-server). Requests and bodies both ways, multiplexing, the
// server's stream limit, trailers, abort, GOAWAY, a killed server, an untrusted certificate.
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function h3Client(opts: { maxStreams?: number; h3Options?: Record<string, unknown>; connect?: Record<string, unknown> } = {}) {
  const server = cleanup.add(await h3Server({ maxStreams: opts.maxStreams }));
  const client = cleanup.add(
    new Client(server.origin, { connect: { ca, ...opts.connect }, allowH3: true, h3Options: { priorKnowledge: true, ...opts.h3Options } }),
  );
  return { server, client };
}

interface Echo {
  method: string;
  path: string;
  headers: [string, string][];
  length: number;
}

/** byte i of the server's /big body. */
const pattern = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => i % 251));

describe('HTTP/3 with prior knowledge', () => {
  it('sends method, path, headers and body, and reads the response', async () => {
    const { client } = await h3Client();
    const connected: string[] = [];
    client.on('connect', () => connected.push('connect'));
    const res = await client.request({ path: '/echo?x=1', method: 'POST', headers: { 'x-test': 'yes' }, body: 'hello' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-conn']).toBe('1');
    const echo = (await res.body.json()) as Echo;
    expect(echo.method).toBe('POST');
    expect(echo.path).toBe('/echo?x=1');
    expect(echo.headers).toContainEqual(['x-test', 'yes']);
    expect(echo.headers).toContainEqual(['content-length', '5']);
    expect(echo.length).toBe(5);
    expect(connected).toEqual(['connect']);
  });

  it('receives a large body byte-exact', async () => {
    const { client } = await h3Client();
    const res = await client.request({ path: '/big?3000000', method: 'GET' });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(body.length).toBe(3_000_000);
    expect(body.equals(pattern(3_000_000))).toBe(true);
  });

  it('sends a large streamed body byte-exact and gets it back', async () => {
    const { client } = await h3Client();
    const data = pattern(2_000_000);
    const chunks = Array.from({ length: 20 }, (_, i) => data.subarray(i * 100_000, (i + 1) * 100_000));
    const res = await client.request({ path: '/body', method: 'PUT', body: Readable.from(chunks) });
    const back = Buffer.from(await res.body.arrayBuffer());
    expect(back.equals(data)).toBe(true);
  });

  it('runs 100 requests at once on one connection', async () => {
    const { client } = await h3Client();
    const all = await Promise.all(
      Array.from({ length: 100 }, (_, i) => client.request({ path: `/delay?50`, method: 'GET', headers: { 'x-i': String(i) } })),
    );
    for (const r of all) {
      expect(r.headers['x-conn']).toBe('1');
      expect(await r.body.text()).toBe('late');
    }
    const stats = (await (await client.request({ path: '/stats', method: 'GET' })).body.json()) as { connections: number; maxOpen: number };
    expect(stats.connections).toBe(1);
    expect(stats.maxOpen).toBeGreaterThan(50);
  });

  it("keeps to the server's stream limit and still completes everything", async () => {
    const { client } = await h3Client({ maxStreams: 10 });
    const all = await Promise.all(Array.from({ length: 30 }, () => client.request({ path: '/delay?30', method: 'GET' })));
    for (const r of all) expect(await r.body.text()).toBe('late');
    const stats = (await (await client.request({ path: '/stats', method: 'GET' })).body.json()) as { connections: number; maxOpen: number };
    expect(stats.maxOpen).toBeLessThanOrEqual(10);
    expect(stats.connections).toBe(1);
  });

  it('a body nobody reads holds its stream only; it completes byte-exact once read', async () => {
    const { client } = await h3Client({ h3Options: { initialMaxStreamData: 65536 } });
    const held = await client.request({ path: '/big?3000000', method: 'GET' });
    // The held body's window closes at 64 KiB; other streams on the connection go on.
    for (let i = 0; i < 5; i++) {
      const r = await client.request({ path: '/echo', method: 'GET' });
      expect(r.headers['x-conn']).toBe('1');
      await r.body.dump();
    }
    const body = Buffer.from(await held.body.arrayBuffer());
    expect(body.equals(pattern(3_000_000))).toBe(true);
  });

  it('delivers 1xx heads to onInfo before the response', async () => {
    const { client } = await h3Client();
    const infos: { statusCode: number; headers: Record<string, unknown> }[] = [];
    const res = await client.request({ path: '/early', method: 'GET', onInfo: (i) => infos.push(i) });
    expect(infos).toMatchObject([{ statusCode: 103, headers: { link: '</style.css>; rel=preload' } }]);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('after hints');
  });

  it('expectContinue holds the body until the 100 arrives; a final answer first means no body', async () => {
    const { client } = await h3Client();
    const infos: number[] = [];
    const res = await client.request({ path: '/continue', method: 'PUT', body: 'payload', expectContinue: true, onInfo: (i) => infos.push(i.statusCode) });
    expect(infos).toEqual([100]);
    expect(await res.body.text()).toBe('7');
    const refused = await client.request({ path: '/status?417', method: 'PUT', body: 'payload', expectContinue: true });
    expect(refused.statusCode).toBe(417);
    await refused.body.dump();
  });

  it('delivers trailers', async () => {
    const { client } = await h3Client();
    const res = await client.request({ path: '/trailers', method: 'GET' });
    expect(await res.body.text()).toBe('ok');
    expect(res.trailers).toEqual({ 'x-trailer': 'done' });
  });

  it('fails a stream the server resets, and the connection goes on', async () => {
    const { client } = await h3Client();
    const res = await client.request({ path: '/reset', method: 'GET' });
    await expect(res.body.text()).rejects.toThrow(/HTTP\/3: stream reset/);
    const next = await client.request({ path: '/echo', method: 'GET' });
    expect(next.headers['x-conn']).toBe('1');
    await next.body.dump();
  });

  it('aborts one stream and the connection goes on', async () => {
    const { client } = await h3Client();
    const ac = new AbortController();
    const res = await client.request({ path: '/hang', method: 'GET', signal: ac.signal });
    const reading = res.body.text();
    ac.abort();
    await expect(reading).rejects.toThrow();
    const next = await client.request({ path: '/echo', method: 'GET' });
    expect(next.headers['x-conn']).toBe('1');
    await next.body.dump();
  });

  it('after a GOAWAY, new requests go to a new connection', async () => {
    const { client } = await h3Client();
    const first = await client.request({ path: '/goaway', method: 'GET' });
    expect(await first.body.text()).toBe('bye');
    const disconnected = new Promise((resolve) => client.once('disconnect', resolve));
    await disconnected;
    const next = await client.request({ path: '/echo', method: 'GET' });
    expect(next.headers['x-conn']).toBe('2');
    await next.body.dump();
  });

  it('a GOAWAY is acted on when it arrives: new requests open a new connection, the one under way finishes', async () => {
    const { server, client } = await h3Client();
    // 8 MB left unread: flow control holds the server's send, so the stream stays open and the
    // server does not close the connection.
    const big = await client.request({ path: '/big?8000000', method: 'GET' });
    expect(big.headers['x-conn']).toBe('1');
    const disconnected = new Promise((resolve) => client.once('disconnect', resolve));
    server.goaway();
    // Before any new request: the GOAWAY itself is the signal.
    await disconnected;
    const next = await client.request({ path: '/echo', method: 'GET' });
    expect(next.headers['x-conn']).toBe('2');
    await next.body.dump();
    const body = Buffer.from(await big.body.arrayBuffer());
    expect(body.equals(pattern(8_000_000))).toBe(true);
  });

  it('a server killed mid-body fails the request with a typed error (no hang)', async () => {
    const { server, client } = await h3Client({ h3Options: { idleTimeout: 500 } });
    const res = await client.request({ path: '/hang', method: 'GET' });
    const reading = res.body.text();
    await server.kill();
    const err = await reading.catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('an untrusted certificate fails with the same code as over TCP', async () => {
    const { client } = await h3Client({ connect: { ca: undefined } });
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: Error) => e)) as Error & { code?: string };
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('refuses upgrade and CONNECT with a clear error', async () => {
    const { client } = await h3Client();
    await expect(client.upgrade({ path: '/', protocol: 'websocket' })).rejects.toThrow(/not supported over HTTP\/3/);
    await expect(client.connect({ path: '/' })).rejects.toThrow(/not supported over HTTP\/3/);
  });
});
