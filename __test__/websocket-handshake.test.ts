// The WebSocket opening handshake as undici performs it (its test/websocket cases, ported): URL
// credentials sent after a 401, the caller's header names forwarded as given, a failed connection
// reported as a TypeError, and the diagnostics messages naming the socket and the server's 101.
import { describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Agent, WebSocket, type Dispatcher, type ErrorEvent } from '../ts/index.js';
import { acceptKey, closeFrame, echo, frame, Peer } from './fixtures/ws-server.js';
import { wsTestKit } from './fixtures/ws-client.js';
import { ca, h2Server } from './fixtures/h2.js';

const { cleanup, server, socket, opened, nextMessage, closeOf, peerPromise } = wsTestKit();

const ok101 = (accept: string): string =>
  `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;

/** Messages published on `name` while the test runs. */
function recorder(name: string): unknown[] {
  const got: unknown[] = [];
  const listener = (m: unknown): void => void got.push(m);
  dc.subscribe(name, listener);
  cleanup.push(async () => void dc.unsubscribe(name, listener));
  return got;
}

describe('WebSocket handshake: credentials in the URL', () => {
  it('are sent only after a 401, once, on the same path', async () => {
    const seen: { url: string | undefined; authorization: string | undefined }[] = [];
    const s = await server((p) => void echo(p), {
      answer: (req, accept) => {
        seen.push({ url: req.url, authorization: req.headers.authorization });
        return req.headers.authorization === undefined
          ? 'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n'
          : ok101(accept);
      },
    });
    const url = new URL(s.ws + '/path');
    url.username = 'user';
    url.password = 'pa ss';
    const ws = await opened(socket(url));
    expect(ws.url).toBe(url.href);
    const basic = `Basic ${Buffer.from('user:pa ss').toString('base64')}`;
    expect(seen).toEqual([
      { url: '/path', authorization: undefined },
      { url: '/path', authorization: basic },
    ]);
  });

  it("are not sent over the caller's own Authorization header", async () => {
    const seen: (string | undefined)[] = [];
    const s = await server((p) => void echo(p), {
      answer: (req) => (seen.push(req.headers.authorization), 'HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'),
    });
    const ws = socket(s.ws.replace('://', '://user:pass@'), { headers: { Authorization: 'Bearer mine' } });
    await once(ws, 'error');
    expect(seen).toEqual(['Bearer mine']);
  });

  it('a second 401 fails the connection', async () => {
    let attempts = 0;
    const s = await server(() => {}, {
      answer: () => (attempts++, 'HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'),
    });
    const ws = socket(s.ws.replace('://', '://user:pass@'));
    const [error] = (await once(ws, 'error')) as [ErrorEvent];
    expect(error.error).toBeInstanceOf(TypeError);
    expect(error.error.message).toMatch(/401/);
    expect(attempts).toBe(2);
  });
});

describe('WebSocket handshake: request headers', () => {
  it("reach the dispatcher under the caller's spelling", async () => {
    const seen: Dispatcher.DispatchOptions[] = [];
    class Recording extends Agent {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        seen.push(options);
        return super.dispatch(options, handler);
      }
    }
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const dispatcher = cleanup.track(new Recording());
    const headers = { 'x-khafra-hello': 'hi', Authorization: 'Bearer token' };
    await opened(socket(s.ws, { dispatcher, headers }));
    const sent = seen[0]!.headers as Record<string, string>;
    expect(sent['x-khafra-hello']).toBe('hi');
    expect(sent.Authorization).toBe('Bearer token');
    expect((await peer).req.headers.authorization).toBe('Bearer token');
  });
});

describe('WebSocket handshake: failures', () => {
  it('a refused connection fires error (a TypeError, the cause kept) before close 1006', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    await new Promise((r) => closed.close(r));
    const ws = socket(`ws://127.0.0.1:${port}`);
    const order: string[] = [];
    let error: ErrorEvent | null = null;
    ws.addEventListener('error', (e) => {
      order.push('error');
      error = e as ErrorEvent;
    });
    const close = await closeOf(ws);
    order.push('close');
    expect(order).toEqual(['error', 'close']);
    expect(error!.error).toBeInstanceOf(TypeError);
    expect((error!.error.cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect([close.code, close.wasClean]).toEqual([1006, false]);
  });
});

describe('WebSocket handshake: an origin that speaks HTTP/2', () => {
  it("is reached over an HTTP/1.1 connection of its own (undici's fallback), requests stay on h2", async () => {
    const h2 = await h2Server(
      (stream) => {
        stream.respond({ ':status': 200 });
        stream.end('over h2');
      },
      { allowHTTP1: true },
    );
    cleanup.push(() => h2.close());
    const upgrades: string[] = [];
    h2.server.on('upgrade', (req, sock, head) => {
      upgrades.push(req.httpVersion);
      sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(String(req.headers['sec-websocket-key']))}\r\n\r\n`);
      void echo(new Peer(sock, req, head));
    });
    const dispatcher = cleanup.track(new Agent({ allowH2: true, connect: { ca } }));
    const res = await dispatcher.request({ origin: h2.origin, path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('over h2');
    const ws = await opened(socket(h2.origin.replace('https:', 'wss:'), { dispatcher }));
    ws.send('hello');
    expect((await nextMessage(ws)).data).toBe('hello');
    expect(upgrades).toEqual(['1.1']);
    const again = await dispatcher.request({ origin: h2.origin, path: '/', method: 'GET' });
    expect(await again.body.text()).toBe('over h2');
    expect(h2.sessions).toHaveLength(1);
  });
});

describe('WebSocket diagnostics channels', () => {
  it('open, ping, pong and close name the WebSocket; open carries the 101', async () => {
    const opens = recorder('lib:websocket:open');
    const pings = recorder('lib:websocket:ping');
    const pongs = recorder('lib:websocket:pong');
    const closes = recorder('lib:websocket:close');
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer, { protocol: (o) => o[0] });
    const ws = await opened(socket(s.ws, 'chat'));
    const p = await peer;
    p.send(Buffer.concat([frame(9, 'hi'), frame(10, 'there'), closeFrame(1000, 'goodbye')]));
    const closed = closeOf(ws);
    expect((await p.nextFrame())!.opcode).toBe(10);
    expect((await p.nextFrame())!.opcode).toBe(8);
    p.socket.end();
    await closed;
    const open = opens[0] as { websocket: unknown; protocol: string; extensions: string; handshakeResponse: { status: number; statusText: string; headers: Record<string, string> } };
    expect(open.websocket).toBe(ws);
    expect([open.protocol, open.extensions]).toEqual(['chat', '']);
    expect(open.handshakeResponse.status).toBe(101);
    expect(open.handshakeResponse.statusText).toBe('Switching Protocols');
    expect(open.handshakeResponse.headers.upgrade).toBe('websocket');
    expect(open.handshakeResponse.headers.connection).toBe('Upgrade');
    expect(typeof open.handshakeResponse.headers['sec-websocket-accept']).toBe('string');
    expect(pings).toEqual([{ payload: Buffer.from('hi'), websocket: ws }]);
    expect(pongs).toEqual([{ payload: Buffer.from('there'), websocket: ws }]);
    expect(closes).toEqual([{ websocket: ws, code: 1000, reason: 'goodbye' }]);
  });
});

describe('WebSocket handshake: the engine runs the session', () => {
  it('a dispatcher handing over a socket of its own (not an engine connection) fails the handshake', async () => {
    const { PassThrough } = await import('node:stream');
    const { Dispatcher: PublicDispatcher } = await import('../ts/index.js');
    const given: InstanceType<typeof PassThrough>[] = [];
    class OwnSocket extends PublicDispatcher {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        const key = (options.headers as Record<string, string>)['sec-websocket-key']!;
        const headers = { upgrade: 'websocket', connection: 'upgrade', 'sec-websocket-accept': acceptKey(key) };
        const socket = new PassThrough();
        given.push(socket);
        const controller = { abort() {}, pause() {}, resume() {}, paused: false, aborted: false, reason: null };
        queueMicrotask(() => handler.onRequestUpgrade?.(controller as never, 101, headers, socket));
        return true;
      }
    }
    const ws = new WebSocket('ws://127.0.0.1:1/', { dispatcher: new OwnSocket() });
    const [error] = (await once(ws, 'error')) as [ErrorEvent];
    expect(error.error).toBeInstanceOf(TypeError);
    expect(error.error.message).toBe('WebSocket handshake failed: the dispatcher did not hand over an engine connection');
    expect(ws.readyState).toBe(WebSocket.CLOSED);
    expect(given[0]!.destroyed).toBe(true);
  });
});
