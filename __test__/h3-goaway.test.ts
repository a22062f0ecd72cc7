// A request that crossed the server's HTTP/3 GOAWAY: the server resets its stream with
// H3_REQUEST_REJECTED (RFC 9114 §4.1.1, §5.2), it was not processed, and ferro sends it again on a
// new connection (the pool's one resend for refused requests, as over HTTP/2's REFUSED_STREAM),
// unless its body was a stream consumed as it went: that fails with a typed error.
// The test server's `/reject` does it to any request but its connection's first.
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A client whose connection 1 has served one request (so `/reject` is rejected on it). */
async function warmClient() {
  const server = cleanup.add(await h3Server());
  const client = cleanup.add(new Client(server.origin, { connect: { ca }, allowH3: true, h3Options: { priorKnowledge: true } }));
  const first = await client.request({ path: '/echo', method: 'GET' });
  expect(first.headers['x-conn']).toBe('1');
  await first.body.text();
  return client;
}

interface Echo {
  method: string;
  path: string;
  length: number;
}

describe('HTTP/3: a request the server rejected after its GOAWAY', () => {
  it('goes again on a new connection and gets its answer there', async () => {
    const client = await warmClient();
    const res = await client.request({ path: '/reject', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-conn']).toBe('2');
    expect(((await res.body.json()) as Echo).path).toBe('/reject');
  });

  it('a body held whole goes again with it', async () => {
    const client = await warmClient();
    const res = await client.request({ path: '/reject', method: 'POST', body: 'hello, again' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-conn']).toBe('2');
    const echo = (await res.body.json()) as Echo;
    expect(echo.method).toBe('POST');
    expect(echo.length).toBe('hello, again'.length);
  });

  it('a one-shot stream body is not sent again: the request fails with a typed error', async () => {
    const client = await warmClient();
    const body = Readable.from([Buffer.from('once'), Buffer.from(' only')]);
    const err = await client.request({ path: '/reject', method: 'PUT', body }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(errors.SocketError);
    expect((err as Error).message).toMatch(/H3_REQUEST_REJECTED/);
    // No connection was opened to send it again: the next request is connection 2's first.
    const next = await client.request({ path: '/echo', method: 'GET' });
    expect(next.headers['x-conn']).toBe('2');
    await next.body.text();
  });
});
