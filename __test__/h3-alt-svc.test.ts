// HTTP/3 found through Alt-Svc (RFC 7838) on an `allowH3` dispatcher: a node:https server on a TCP
// port advertises the Rust HTTP/3 server on the same UDP port (or a dead / black-holed one), and
// the client moves there while the entry is fresh; an endpoint that does not answer costs one
// request at most `fallbackTimeout`, then nothing. UDP traffic is counted by a dgram socket.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:https';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Agent, Client, Pool, fetch } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const tls = (name: string): Buffer => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url));

/** An https server on 127.0.0.1 answering `tcp` with the Alt-Svc value `altSvc(port)` gives. */
async function tcpOrigin(altSvc: (port: number) => string | null): Promise<{ port: number; origin: string; requests: number }> {
  const state = { port: 0, origin: '', requests: 0 };
  const server: Server = createServer({ key: tls('localhost.key'), cert: tls('localhost.pem') }, (req, res) => {
    state.requests++;
    const v = altSvc(state.port);
    if (v !== null) res.setHeader('alt-svc', v);
    res.end('tcp');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.port = (server.address() as AddressInfo).port;
  state.origin = `https://localhost:${state.port}`;
  cleanup.defer(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return state;
}

/** A UDP socket that counts what reaches `port` and answers nothing (a black hole). */
async function udpCounter(port = 0): Promise<{ port: number; packets: number }> {
  const socket: UdpSocket = createSocket('udp4');
  const state = { port: 0, packets: 0 };
  socket.on('message', () => state.packets++);
  socket.bind(port, '127.0.0.1');
  await once(socket, 'listening');
  state.port = socket.address().port;
  cleanup.defer(async () => {
    socket.close();
  });
  return state;
}

/** A UDP port nothing listens on. */
async function deadPort(): Promise<number> {
  const socket = createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const { port } = socket.address();
  socket.close();
  return port;
}

const h3Client = (origin: string, opts: Record<string, unknown> = {}): Client =>
  cleanup.add(new Client(origin, { connect: { ca }, allowH3: true, ...opts }));

describe('Alt-Svc discovery', () => {
  it('moves to HTTP/3 after an HTTPS response advertises it on the same port', async () => {
    const tcp = await tcpOrigin((port) => `h3=":${port}"; ma=60`);
    cleanup.add(await h3Server({ port: tcp.port }));
    const client = h3Client(tcp.origin);
    const first = await client.request({ path: '/', method: 'GET' });
    expect(await first.body.text()).toBe('tcp');
    const second = await client.request({ path: '/echo', method: 'GET' });
    expect(second.headers['x-conn']).toBe('1');
    await second.body.dump();
    expect(tcp.requests).toBe(1);
  });

  it('works for an Agent and fetch', async () => {
    const tcp = await tcpOrigin((port) => `h3=":${port}"`);
    cleanup.add(await h3Server({ port: tcp.port }));
    const agent = cleanup.add(new Agent({ connect: { ca }, allowH3: true }));
    expect(await (await fetch(`${tcp.origin}/`, { dispatcher: agent })).text()).toBe('tcp');
    const res = await fetch(`${tcp.origin}/echo`, { dispatcher: agent });
    expect(res.headers.get('x-conn')).toBe('1');
    await res.arrayBuffer();
  });

  it('sends no QUIC packet when allowH3 is off, or when nothing was advertised', async () => {
    const udp = await udpCounter();
    const tcp = await tcpOrigin(() => `h3="127.0.0.1:${udp.port}"`);
    const plain = cleanup.add(new Pool(tcp.origin, { connect: { ca } }));
    for (let i = 0; i < 3; i++) await (await plain.request({ path: '/', method: 'GET' })).body.text();
    const quiet = await tcpOrigin(() => null);
    const allowed = h3Client(quiet.origin);
    for (let i = 0; i < 3; i++) await (await allowed.request({ path: '/', method: 'GET' })).body.text();
    expect(udp.packets).toBe(0);
    expect(tcp.requests).toBe(3);
  });

  it('ma=0 keeps nothing', async () => {
    const udp = await udpCounter();
    const tcp = await tcpOrigin(() => `h3="127.0.0.1:${udp.port}"; ma=0`);
    const client = h3Client(tcp.origin);
    for (let i = 0; i < 3; i++) await (await client.request({ path: '/', method: 'GET' })).body.text();
    expect(udp.packets).toBe(0);
  });
});

describe('fallback to TCP', () => {
  // The race window: wide, so a loaded machine cannot blur "waited for it" and "did not".
  const WINDOW = 600;
  for (const kind of ['black-holed', 'nothing listening'] as const) {
    it(`${kind}: the request goes over TCP within fallbackTimeout, later ones pay nothing`, async () => {
      const udp = kind === 'black-holed' ? await udpCounter() : { port: await deadPort(), packets: 0 };
      const tcp = await tcpOrigin(() => `h3="localhost:${udp.port}"`);
      // Each request on a fresh connection: the fallback decision is made per connection.
      const client = h3Client(tcp.origin, { pipelining: 0, h3Options: { fallbackTimeout: WINDOW } });
      await (await client.request({ path: '/', method: 'GET' })).body.text();
      const started = performance.now();
      const second = await client.request({ path: '/', method: 'GET' });
      const took = performance.now() - started;
      expect(await second.body.text()).toBe('tcp');
      expect(took).toBeGreaterThanOrEqual(WINDOW - 10);
      expect(took).toBeLessThan(WINDOW + 1000);
      if (kind === 'black-holed') expect(udp.packets).toBeGreaterThan(0);
      const before = udp.packets;
      const t3 = performance.now();
      await (await client.request({ path: '/', method: 'GET' })).body.text();
      // No QUIC wait: well under the window (a TCP + TLS connection on loopback).
      expect(performance.now() - t3).toBeLessThan(WINDOW - 10);
      expect(udp.packets).toBe(before);
      expect(tcp.requests).toBe(3);
    });
  }

  it('with prior knowledge there is no fallback: the error is reported', async () => {
    const tcp = await tcpOrigin(() => null);
    const client = h3Client(tcp.origin, { connectTimeout: 300, h3Options: { priorKnowledge: true } });
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: Error) => e)) as Error & { code?: string };
    expect(err.code).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(tcp.requests).toBe(0);
  });
});
