// The order of a request's header lines on the wire, as undici writes them (issue 35 item 7): host,
// then connection (keep-alive, close, or an upgrade's pair), then the caller's headers in their
// order, then the framing header. Servers that echo rawHeaders see exactly this list.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Client } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A node:http server answering each request (and upgrade) with its rawHeaders as JSON. */
async function echoRawHeaders() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(JSON.stringify(req.rawHeaders)));
  });
  server.on('upgrade', (req: IncomingMessage, socket) => {
    socket.end(`HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: ${req.headers.upgrade}\r\n\r\n${JSON.stringify(req.rawHeaders)}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.defer(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, host: origin.slice('http://'.length) };
}

async function rawHeadersOf(client: Client, opts: Parameters<Client['request']>[0]): Promise<string[]> {
  const res = await client.request(opts);
  return JSON.parse(await res.body.text()) as string[];
}

describe('request header order on the wire', () => {
  it('GET: host, connection: keep-alive, then the caller\'s headers', async () => {
    const { origin, host } = await echoRawHeaders();
    const client = cleanup.add(new Client(origin));
    const raw = await rawHeadersOf(client, { path: '/', method: 'GET', headers: { 'x-b': '2', 'X-A': '1' } });
    // Names go out as the caller spelled them, as undici sends them.
    expect(raw).toEqual(['host', host, 'connection', 'keep-alive', 'x-b', '2', 'X-A', '1']);
  });

  it('a buffered body: content-length comes last, after content-type', async () => {
    const { origin, host } = await echoRawHeaders();
    const client = cleanup.add(new Client(origin));
    const raw = await rawHeadersOf(client, { path: '/', method: 'POST', headers: { 'content-type': 'text/plain', 'x-a': '1' }, body: 'hello' });
    expect(raw).toEqual(['host', host, 'connection', 'keep-alive', 'content-type', 'text/plain', 'x-a', '1', 'content-length', '5']);
  });

  it('a stream body of unknown length: transfer-encoding comes last', async () => {
    const { origin, host } = await echoRawHeaders();
    const client = cleanup.add(new Client(origin));
    const raw = await rawHeadersOf(client, { path: '/', method: 'PUT', headers: { 'x-a': '1' }, body: Readable.from(['a', 'b']) });
    expect(raw).toEqual(['host', host, 'connection', 'keep-alive', 'x-a', '1', 'transfer-encoding', 'chunked']);
  });

  it('reset and a caller\'s host: host, connection: close, then the rest', async () => {
    const { origin } = await echoRawHeaders();
    const client = cleanup.add(new Client(origin));
    const raw = await rawHeadersOf(client, { path: '/', method: 'GET', reset: true, headers: { 'x-a': '1', host: 'example.test' } });
    expect(raw).toEqual(['host', 'example.test', 'connection', 'close', 'x-a', '1']);
  });

  it('an upgrade: host, connection: upgrade, upgrade, then the caller\'s headers', async () => {
    const { origin, host } = await echoRawHeaders();
    const client = cleanup.add(new Client(origin));
    const { socket } = await client.upgrade({ path: '/', protocol: 'echo', headers: { 'x-a': '1' } });
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    expect(JSON.parse(text)).toEqual(['host', host, 'connection', 'upgrade', 'upgrade', 'echo', 'x-a', '1']);
  });
});
