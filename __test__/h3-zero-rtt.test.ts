// HTTP/3 0-RTT (`h3Options.zeroRtt`) against the Rust test server (crates/h3-test-server): a pool's
// second QUIC connection resumes the first one's TLS session and, with zeroRtt, sends safe
// bodiless requests in early data. The server says which requests came early (`x-early-data`),
// answers 425 to early ones on /too-early, and with --reject-0rtt rejects all early data.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const tls = (name: string): Buffer => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url));

/**
 * A prior-knowledge client whose first connection has answered a request and closed (its idle
 * session ends after `keepAliveTimeout`), so the next request opens a second connection that can
 * resume the first one's session.
 */
async function resumingClient(opts: { zeroRtt?: boolean; rejectZeroRtt?: boolean; connectTimeout?: number } = {}) {
  // The delay stands in for a network's round trip: on loopback the handshake could complete
  // before the client has written its early requests.
  const server = cleanup.add(await h3Server({ rejectZeroRtt: opts.rejectZeroRtt, acceptDelay: 30 }));
  const client = cleanup.add(
    new Client(server.origin, {
      connect: { ca },
      allowH3: true,
      keepAliveTimeout: 50,
      keepAliveMaxTimeout: 50,
      connectTimeout: opts.connectTimeout,
      h3Options: { priorKnowledge: true, zeroRtt: opts.zeroRtt },
    }),
  );
  const first = await client.request({ path: '/echo', method: 'GET' });
  expect(first.headers['x-conn']).toBe('1');
  expect(first.headers['x-early-data']).toBe('0');
  const closed = once(client, 'disconnect');
  await first.body.dump();
  await closed;
  return { server, client };
}

/**
 * TLS sessions the server resumed, and those it refused (`--reject-0rtt`); `later`: connections
 * opened after the first, each of which offers the session of the one before it. Usually that is
 * one, but a loaded machine can let connection 2 idle out (`keepAliveTimeout: 50`) before this
 * request, which then opens a third.
 */
async function sessions(client: Client): Promise<{ resumed: number; refused: number; later: number }> {
  const res = await client.request({ path: '/resumed', method: 'GET' });
  const counts = (await res.body.json()) as { resumed: number; refused: number };
  return { ...counts, later: Number(res.headers['x-conn']) - 1 };
}

/** Every connection after the first resumed its TLS session (or, `refused`, had it refused). */
async function expectResumed(client: Client, refused = false): Promise<void> {
  const s = await sessions(client);
  expect(s.later).toBeGreaterThanOrEqual(1);
  expect(s).toEqual({ resumed: refused ? 0 : s.later, refused: refused ? s.later : 0, later: s.later });
}

describe('HTTP/3 0-RTT', () => {
  it('off by default: a second connection resumes the TLS session, but nothing goes in early data', async () => {
    const { client } = await resumingClient();
    const res = await client.request({ path: '/echo', method: 'GET' });
    expect(res.headers['x-conn']).toBe('2');
    expect(res.headers['x-early-data']).toBe('0');
    await res.body.dump();
    await expectResumed(client);
  });

  it('on: a GET on the resumed connection goes in early data and gets its response', async () => {
    const { client } = await resumingClient({ zeroRtt: true });
    const res = await client.request({ path: '/echo?early', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-conn']).toBe('2');
    expect(res.headers['x-early-data']).toBe('1');
    expect(((await res.body.json()) as { path: string }).path).toBe('/echo?early');
    await expectResumed(client);
  });

  it('a POST, or a GET with a body, waits for the handshake while a GET beside it goes early', async () => {
    const { client } = await resumingClient({ zeroRtt: true });
    const [post, get, withBody] = await Promise.all([
      client.request({ path: '/echo', method: 'POST', body: 'payload' }),
      client.request({ path: '/echo', method: 'GET' }),
      client.request({ path: '/echo', method: 'GET', body: 'x' }),
    ]);
    for (const r of [post, get, withBody]) expect(r.headers['x-conn']).toBe('2');
    expect(post.headers['x-early-data']).toBe('0');
    expect(withBody.headers['x-early-data']).toBe('0');
    expect(get.headers['x-early-data']).toBe('1');
    expect(((await post.body.json()) as { length: number }).length).toBe(7);
    await Promise.all([get.body.dump(), withBody.body.dump()]);
  });

  it('a 425 to an early request is retried once after the handshake; the caller sees only the 200', async () => {
    const { client } = await resumingClient({ zeroRtt: true });
    const res = await client.request({ path: '/too-early', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-early-data']).toBe('0');
    // The server had answered 425 once before this response.
    expect(res.headers['x-425s']).toBe('1');
    expect(await res.body.text()).toBe('ok');
  });

  it('a 425 to a request that did not go early reaches the caller as it is', async () => {
    const { client } = await resumingClient({ zeroRtt: true });
    const res = await client.request({ path: '/status?425', method: 'POST', body: 'x' });
    expect(res.statusCode).toBe(425);
    expect(res.headers['x-early-data']).toBe('0');
    await res.body.dump();
  });

  it('early data the server rejects is sent again over 1-RTT: every request answered once', async () => {
    const { client } = await resumingClient({ zeroRtt: true, rejectZeroRtt: true });
    const paths = Array.from({ length: 5 }, (_, i) => `/echo?${i}`);
    const all = await Promise.all([
      ...paths.map((path) => client.request({ path, method: 'GET' })),
      client.request({ path: '/echo?post', method: 'POST', body: 'p' }),
    ]);
    const seen = await Promise.all(all.map(async (r) => [r.statusCode, r.headers['x-conn'], r.headers['x-early-data'], ((await r.body.json()) as { path: string }).path]));
    expect(seen).toEqual([...paths, '/echo?post'].map((path) => [200, '2', '0', path]));
    // The client offered the first connection's session (with early data); the server refused it.
    await expectResumed(client, true);
    // The connection goes on over 1-RTT.
    const again = await client.request({ path: '/echo', method: 'GET' });
    expect(again.headers['x-conn']).toBe('2');
    await again.body.dump();
  });

  it('a resumed connection to a server that is gone: the early request fails with the connect timeout, no hang', async () => {
    // The timeout bounds the first connection's handshake too (about 50 ms here, at load 12): it
    // must leave room for a loaded machine, not only for the second connection's wait.
    const TIMEOUT = 1500;
    const { server, client } = await resumingClient({ zeroRtt: true, connectTimeout: TIMEOUT });
    await server.kill();
    const started = performance.now();
    const err = (await client.request({ path: '/echo', method: 'GET' }).catch((e: Error) => e)) as Error & { code?: string };
    const waited = performance.now() - started;
    expect(err.code).toBe('UND_ERR_CONNECT_TIMEOUT');
    // Ended by the connect timeout: not sooner, and long before QUIC's idle timeout (30 s).
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT - 1);
    expect(waited).toBeLessThan(TIMEOUT + 5000);
  });

  it('to an Alt-Svc endpoint that is gone, the early request goes over TCP within fallbackTimeout', async () => {
    const WINDOW = 600;
    const tcp = { requests: 0, port: 0 };
    const https = createServer({ key: tls('localhost.key'), cert: tls('localhost.pem') }, (_req, res) => {
      tcp.requests++;
      res.setHeader('alt-svc', `h3=":${tcp.port}"`);
      res.end('tcp');
    });
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    tcp.port = (https.address() as AddressInfo).port;
    cleanup.defer(async () => {
      https.closeAllConnections();
      await new Promise((r) => https.close(r));
    });
    const h3 = cleanup.add(await h3Server({ port: tcp.port, acceptDelay: 30 }));
    const client = cleanup.add(
      new Client(`https://localhost:${tcp.port}`, {
        connect: { ca },
        allowH3: true,
        pipelining: 0,
        keepAliveTimeout: 50,
        keepAliveMaxTimeout: 50,
        h3Options: { zeroRtt: true, fallbackTimeout: WINDOW },
      }),
    );
    expect(await (await client.request({ path: '/', method: 'GET' })).body.text()).toBe('tcp');
    const quic = await client.request({ path: '/echo', method: 'GET' });
    expect(quic.headers['x-conn']).toBe('1');
    // Both connections (TCP, then QUIC with its session ticket) close idle.
    const closed = once(client, 'disconnect');
    await quic.body.dump();
    await closed;
    await h3.kill();
    const started = performance.now();
    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('tcp');
    expect(performance.now() - started).toBeLessThan(WINDOW + 1000);
    expect(tcp.requests).toBe(2);
  });

  it('refuses a zeroRtt that is not a boolean', () => {
    for (const zeroRtt of [1, 'yes', {}]) {
      expect(() => new Client('https://localhost:1', { allowH3: true, h3Options: { zeroRtt } as never })).toThrow(errors.InvalidArgumentError);
      expect(() => new Client('https://localhost:1', { allowH3: true, h3Options: { zeroRtt } as never })).toThrow(/h3Options.zeroRtt must be a valid boolean value/);
    }
  });
});
