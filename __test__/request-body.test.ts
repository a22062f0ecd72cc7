// Streamed request bodies go into the engine piece by piece, with backpressure: Content-Length
// framing when the length is given, chunked otherwise.
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { countRequests, echoFramingServer, httpServer, rawServer, readUntil } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const track = cleanup.track;

const echoServer = async () => track(await echoFramingServer(''));

describe('streamed request bodies', () => {
  it('sends a Readable chunked when no content-length is given', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const res = await client.request({ path: '/', method: 'POST', body: Readable.from(['a', 'bb', 'ccc']) });
    expect(res.headers['x-te']).toBe('chunked');
    expect(await res.body.text()).toBe('abbccc');
  });

  it('uses content-length framing when the header gives the size', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const res = await client.request({
      path: '/',
      method: 'PUT',
      headers: { 'content-length': '6' },
      body: Readable.from([Buffer.from('abc'), Buffer.from('def')]),
    });
    expect(res.headers['x-cl']).toBe('6');
    expect(res.headers['x-te']).toBe('');
    expect(await res.body.text()).toBe('abcdef');
  });

  it('takes async and sync iterables', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    async function* gen() {
      yield 'one,';
      yield new TextEncoder().encode('two,');
      yield Buffer.from('three');
    }
    const a = await client.request({ path: '/', method: 'POST', body: gen() });
    expect(await a.body.text()).toBe('one,two,three');
    const b = await client.request({ path: '/', method: 'POST', body: ['x', 'y', 'z'] });
    expect(await b.body.text()).toBe('xyz');
  });

  it('streams a large body with backpressure, byte-exact', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const chunk = Buffer.alloc(64 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251;
    let produced = 0;
    const total = 8 * 1024 * 1024;
    const body = new Readable({
      read() {
        if (produced >= total) return void this.push(null);
        produced += chunk.length;
        this.push(chunk);
      },
    });
    const res = await client.request({ path: '/', method: 'POST', body });
    const got = Buffer.from(await res.body.arrayBuffer());
    expect(got.length).toBe(total);
    expect(got.subarray(0, chunk.length).equals(chunk)).toBe(true);
    expect(got.subarray(total - chunk.length).equals(chunk)).toBe(true);
  });

  it('fails with RequestContentLengthMismatchError when the stream is shorter or longer than announced', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    await expect(
      client.request({ path: '/', method: 'POST', headers: { 'content-length': '10' }, body: Readable.from(['short']) }),
    ).rejects.toBeInstanceOf(errors.RequestContentLengthMismatchError);
    await expect(
      client.request({ path: '/', method: 'POST', headers: { 'content-length': '2' }, body: Readable.from(['too long']) }),
    ).rejects.toBeInstanceOf(errors.RequestContentLengthMismatchError);
  });

  it('a body stream that errors aborts the request with that error', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const boom = new Error('source failed');
    const body = new Readable({
      read() {
        this.push('partial');
        this.destroy(boom);
      },
    });
    await expect(client.request({ path: '/', method: 'POST', body })).rejects.toBe(boom);
  });

  it('calls onBodySent for each chunk', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    const sent: string[] = [];
    await new Promise<void>((resolve, reject) => {
      client.dispatch(
        { path: '/', method: 'POST', body: Readable.from(['p', 'q']) },
        {
          onRequestStart() {},
          onBodySent(chunk) {
            sent.push(String(chunk));
          },
          onResponseStart() {},
          onResponseData() {},
          onResponseEnd: () => resolve(),
          onResponseError: (_c, e) => reject(e),
        },
      );
    });
    expect(sent).toEqual(['p', 'q']);
  });
});

describe('upgrade and CONNECT at the dispatch level', () => {
  it('hands an upgraded connection to onRequestUpgrade as a duplex socket', async () => {
    const srv = track(
      await rawServer(async (socket) => {
        const head = await readUntil(socket, (t) => countRequests(t) >= 1);
        expect(head).toMatch(/connection: upgrade\r\n/i);
        expect(head).toMatch(/upgrade: echo\r\n/i);
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\nhello ');
        socket.on('data', (d) => socket.write(d));
        socket.on('end', () => socket.end());
      }),
    );
    const client = track(new Client(srv.origin));
    const socket = await new Promise<import('node:stream').Duplex>((resolve, reject) => {
      client.dispatch(
        { path: '/', method: 'GET', upgrade: 'echo' },
        {
          onRequestStart() {},
          onRequestUpgrade(_c, status, headers, sock) {
            expect(status).toBe(101);
            expect(headers.upgrade).toBe('echo');
            resolve(sock);
          },
          onResponseError: (_c, e) => reject(e),
        },
      );
    });
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    const ended = new Promise((r) => socket.on('end', r));
    socket.write('world');
    socket.end();
    await ended;
    expect(Buffer.concat(received).toString()).toBe('hello world');
    expect((socket as unknown as { remotePort: number }).remotePort).toBe(srv.port);
  });
});
