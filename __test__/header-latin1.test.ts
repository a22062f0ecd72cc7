// Header field values are byte strings (DESIGN §5, as undici): bytes 0x80–0xFF travel as the code
// points U+0080–U+00FF both ways, never UTF-8 decoded or replaced, so every byte a server sends can
// be forwarded unchanged. Over HTTP/1.1 and HTTP/2, for headers, rawHeaders, trailers, the status
// message and fetch's Headers; a value above U+00FF is refused as undici refuses it.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { Client, errors, fetch } from '../ts/index.js';
import { countRequests, listen, rawServer, readUntil, type Running } from './fixtures/servers.js';
import type { Server } from 'node:http';
import { useCleanup } from './fixtures/cleanup.js';
import { recorder } from './fixtures/recorder.js';
import { ca, h2Server } from './fixtures/h2.js';

const cleanup = useCleanup();

/** The bytes under test: 'å' (E5), 'ÿ' (FF) and U+0080 — none valid UTF-8 on its own. */
const NAME = 'attachment; filename="\u00e5r.pdf"';
const MIXED = 'a\u00ffb\u0080c';
const TRAIL = '\u00e5\u00ff\u0080';
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');

/** A raw server answering every request with these exact bytes (a chunked body with trailers). */
async function byteServer(): Promise<Running<NetServer>> {
  const response = latin1(
    'HTTP/1.1 200 Gr\u00fc\u00dfe\r\n' +
      `Content-Disposition: ${NAME}\r\n` +
      `X-Mixed: ${MIXED}\r\n` +
      'Transfer-Encoding: chunked\r\n' +
      'Trailer: X-Trail\r\n\r\n' +
      `2\r\nok\r\n0\r\nX-Trail: ${TRAIL}\r\n\r\n`,
  );
  return cleanup.track(
    await rawServer(async (socket) => {
      socket.on('error', () => {});
      for (;;) {
        await readUntil(socket, (t) => countRequests(t) >= 1);
        socket.write(response);
      }
    }),
  );
}

/** A node:http server recording each request's headers (node:http reads header bytes as latin1). */
async function echoServer(): Promise<[Running<Server>, IncomingMessage[]]> {
  const seen: IncomingMessage[] = [];
  const srv = await listen(
    createServer((req, res) => {
      seen.push(req);
      res.end('ok');
    }),
  );
  return [cleanup.track(srv), seen];
}

/**
 * A node:http proxy that answers each request with what `client` got from its origin, its headers
 * set with res.setHeader; resolves with the response a node:http client got from the proxy.
 */
async function throughProxy(client: Client): Promise<IncomingMessage> {
  const proxy = cleanup.track(
    await listen(
      createServer(async (_req, res) => {
        try {
          const r = await client.request({ path: '/', method: 'GET' });
          // ERR_INVALID_CHAR here if a byte had come out as U+FFFD.
          for (const [name, value] of Object.entries(r.headers)) {
            if (name !== 'transfer-encoding' && name !== 'trailer') res.setHeader(name, value!);
          }
          // Written, not passed to end(): node:http writes the head in a string body's encoding
          // (UTF-8), and with a known length re-reads content-disposition as UTF-8 bytes.
          res.write(Buffer.from(await r.body.arrayBuffer()));
          res.end();
        } catch (err) {
          res.statusCode = 500;
          res.end(String(err));
        }
      }),
    ),
  );
  const req = get({ host: '127.0.0.1', port: proxy.port, path: '/' });
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  return res;
}

describe('response header bytes over HTTP/1.1', () => {
  it('dispatch(): headers, rawHeaders, trailers and the status message keep every byte', async () => {
    const srv = await byteServer();
    const client = cleanup.track(new Client(srv.origin));
    let message = '';
    const [handler, rec] = recorder({ onResponseStart: (_c, _s, _h, m) => void (message = m ?? '') });
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.error).toBeUndefined();
    expect(message).toBe('Gr\u00fc\u00dfe');
    expect(rec.headers!['content-disposition']).toBe(NAME);
    expect(rec.headers!['x-mixed']).toBe(MIXED);
    expect(rec.trailers).toEqual({ 'x-trail': TRAIL });
    const raw = rec.controller!.rawHeaders!;
    expect(raw[1]).toEqual(latin1(NAME));
    expect(raw[3]).toEqual(latin1(MIXED));
    expect(rec.controller!.rawTrailers).toEqual([latin1('X-Trail'), latin1(TRAIL)]);
  });

  it('request() and fetch() hand out the same byte strings', async () => {
    const srv = await byteServer();
    const client = cleanup.track(new Client(srv.origin));
    const res = await client.request({ path: '/', method: 'GET' });
    expect(res.headers['content-disposition']).toBe(NAME);
    await res.body.text();
    expect(res.trailers).toEqual({ 'x-trail': TRAIL });

    const raw = await client.request({ path: '/', method: 'GET', responseHeaders: 'raw' });
    expect(raw.headers).toContain(MIXED);
    await raw.body.dump();

    const f = await fetch(srv.origin, { dispatcher: client });
    expect(f.statusText).toBe('Gr\u00fc\u00dfe');
    expect(f.headers.get('content-disposition')).toBe(NAME);
    expect(f.headers.get('x-mixed')).toBe(MIXED);
    expect(await f.text()).toBe('ok');
  });

  it('a node:http proxy forwards the headers it got through ferro unchanged', async () => {
    const upstream = await byteServer();
    const res = await throughProxy(cleanup.track(new Client(upstream.origin)));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(NAME);
    expect(res.rawHeaders).toContain(MIXED);
  });

  it("fetch() follows a Location of raw UTF-8 bytes to the UTF-8 URL (undici's fetch and browsers)", async () => {
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        socket.on('error', () => {});
        for (;;) {
          const target = (await readUntil(socket, (t) => countRequests(t) >= 1)).split(' ')[1]!;
          if (target === '/start') {
            const utf8 = Buffer.from('\u00e9', 'utf8');
            socket.write(Buffer.concat([latin1('HTTP/1.1 302 Found\r\nLocation: /caf'), utf8, latin1('\r\ncontent-length: 0\r\n\r\n')]));
          } else {
            socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${target.length}\r\n\r\n${target}`);
          }
        }
      }),
    );
    const client = cleanup.track(new Client(srv.origin));
    const res = await fetch(`${srv.origin}/start`, { dispatcher: client });
    expect(await res.text()).toBe('/caf%C3%A9');
    expect(res.url).toBe(`${srv.origin}/caf%C3%A9`);
  });
});

describe('request header bytes over HTTP/1.1', () => {
  it("a value with 'å' goes out as the byte E5 (request(), dispatch(), fetch())", async () => {
    const [srv, seen] = await echoServer();
    const client = cleanup.track(new Client(srv.origin));
    await (await client.request({ path: '/', method: 'GET', headers: { 'x-name': NAME } })).body.text();
    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET', headers: ['x-name', MIXED] }, handler);
    await rec.done;
    await (await fetch(srv.origin, { dispatcher: client, headers: { 'x-name': TRAIL } })).text();
    expect(seen.map((r) => r.headers['x-name'])).toEqual([NAME, MIXED, TRAIL]);
  });

  it('the bytes on the wire are latin1, one byte per code point', async () => {
    let head = '';
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        head = await readUntil(socket, (t) => t.includes('\r\n\r\n'));
        socket.end('HTTP/1.1 204 No Content\r\n\r\n');
      }),
    );
    const client = cleanup.track(new Client(srv.origin));
    await (await client.request({ path: '/', method: 'GET', headers: { 'x-name': '\u00e5' } })).body.dump();
    expect(head).toContain('x-name: \u00e5\r\n');
  });

  it('refuses a value above U+00FF with InvalidArgumentError, as undici does, before anything is sent', async () => {
    const [srv, seen] = await echoServer();
    const client = cleanup.track(new Client(srv.origin));
    for (const value of ['\u0101', 'ok \u20ac', '\u{1f600}', 'a\u0001b', 'a\u007fb']) {
      await expect(client.request({ path: '/', method: 'GET', headers: { 'x-bad': value } })).rejects.toThrow(
        errors.InvalidArgumentError,
      );
      await expect(client.request({ path: '/', method: 'GET', headers: { 'X-Bad': [value] } })).rejects.toThrow(
        'invalid X-Bad header',
      );
    }
    // fetch's Headers refuse it as a ByteString (the Fetch spec's TypeError).
    await expect(fetch(srv.origin, { dispatcher: client, headers: { 'x-bad': '\u0101' } })).rejects.toThrow(TypeError);
    expect(seen).toHaveLength(0);
  });
});

describe('header bytes over HTTP/2', () => {
  it('response headers, trailers and request headers keep every byte', async () => {
    const got: (string | undefined)[] = [];
    const srv = cleanup.track(
      await h2Server((stream, headers) => {
        got.push(headers['x-name'] as string | undefined);
        // node:http2 writes header strings as latin1 bytes.
        stream.respond({ ':status': 200, 'content-disposition': NAME, 'x-mixed': MIXED }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-trail': TRAIL }));
        stream.end('ok');
      }),
    );
    const client = cleanup.track(new Client(srv.origin, { connect: { ca }, allowH2: true }));

    const res = await client.request({ path: '/', method: 'GET', headers: { 'x-name': NAME } });
    expect(res.headers['content-disposition']).toBe(NAME);
    expect(res.headers['x-mixed']).toBe(MIXED);
    expect(await res.body.text()).toBe('ok');
    expect(res.trailers).toEqual({ 'x-trail': TRAIL });

    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET', headers: { 'x-name': MIXED } }, handler);
    await rec.done;
    expect(rec.controller!.rawHeaders).toContainEqual(latin1(NAME));
    expect(rec.controller!.rawTrailers).toEqual([latin1('x-trail'), latin1(TRAIL)]);

    const f = await fetch(srv.origin, { dispatcher: client, headers: { 'x-name': TRAIL } });
    expect(f.headers.get('content-disposition')).toBe(NAME);
    expect(await f.text()).toBe('ok');

    expect(got).toEqual([NAME, MIXED, TRAIL]);
  });

  it('a node:http proxy forwards what it got over HTTP/2 unchanged', async () => {
    const srv = cleanup.track(
      await h2Server((stream) => {
        stream.respond({ ':status': 200, 'content-disposition': NAME, 'x-mixed': MIXED });
        stream.end('ok');
      }),
    );
    const res = await throughProxy(cleanup.track(new Client(srv.origin, { connect: { ca }, allowH2: true })));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(NAME);
    expect(res.rawHeaders).toContain(MIXED);
  });

  it('a value above U+00FF is refused over HTTP/2 too', async () => {
    const srv = cleanup.track(await h2Server((stream) => stream.respond({ ':status': 204 }, { endStream: true })));
    const client = cleanup.track(new Client(srv.origin, { connect: { ca }, allowH2: true }));
    await expect(client.request({ path: '/', method: 'GET', headers: { 'x-bad': '\u20ac' } })).rejects.toThrow('invalid x-bad header');
  });
});
