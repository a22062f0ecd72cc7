// WebSocket: the WHATWG interface, the opening handshake, messages both ways and the closing
// handshake, against the RFC 6455 server in fixtures/ws-server.ts.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, Client, buildConnector, CloseEvent, ErrorEvent, MessageEvent, WebSocket, ping } from '../ts/index.js';
import { closeFrame, echo, frame } from './fixtures/ws-server.js';
import { wsTestKit } from './fixtures/ws-client.js';

const { cleanup, server, socket, opened, inbox, nextMessage, closeOf, peerPromise } = wsTestKit();

describe('WebSocket: opening', () => {
  it('opens, sends the handshake headers and reports the chosen subprotocol', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer, { protocol: (offered) => offered[1] });
    const ws = socket(s.ws + '/chat?room=1', ['one', 'two']);
    expect(ws.readyState).toBe(WebSocket.CONNECTING);
    expect([ws.CONNECTING, ws.OPEN, ws.CLOSING, ws.CLOSED, WebSocket.CLOSED]).toEqual([0, 1, 2, 3, 3]);
    expect(Object.keys(ws)).toEqual([]);
    // WebIDL: enumerable accessors on the prototype, and the interface's name.
    expect(Object.prototype.toString.call(ws)).toBe('[object WebSocket]');
    expect(Object.getOwnPropertyDescriptor(WebSocket.prototype, 'readyState')!.enumerable).toBe(true);
    expect(ws.url).toBe(`${s.ws}/chat?room=1`);
    expect(ws.protocol).toBe('');
    await opened(ws);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(ws.protocol).toBe('two');
    expect(ws.extensions).toBe('');
    const { req } = await peer;
    expect(req.url).toBe('/chat?room=1');
    expect(req.headers['sec-websocket-version']).toBe('13');
    expect(req.headers['sec-websocket-protocol']).toBe('one, two');
    expect(req.headers['sec-websocket-extensions']).toBe('permessage-deflate; client_max_window_bits');
    expect(req.headers.upgrade).toBe('websocket');
    expect(Buffer.from(String(req.headers['sec-websocket-key']), 'base64')).toHaveLength(16);
  });

  it('delivers a message the server sent in the same packet as its 101', async () => {
    const { onPeer } = peerPromise();
    const s = await server(onPeer, {
      answer: (_req, accept) =>
        Buffer.concat([
          Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`),
          frame(1, 'right away'),
        ]),
    });
    const ws = socket(s.ws);
    const next = inbox(ws);
    await opened(ws);
    expect((await next()).data).toBe('right away');
  });

  it('takes the options object: protocols, dispatcher, headers', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer, { protocol: (o) => o[0] });
    const dispatcher = cleanup.track(new Client(s.origin));
    const ws = await opened(socket(s.ws, { protocols: 'proto', dispatcher, headers: { 'x-token': 'abc' } }));
    expect(ws.protocol).toBe('proto');
    expect((await peer).req.headers['x-token']).toBe('abc');
  });

  it('accepts http: URLs as ws:', async () => {
    const s = await server();
    const ws = socket(s.origin + '/');
    expect(ws.url).toBe(`${s.ws}/`);
    await opened(ws);
  });

  it('refuses bad URLs and subprotocols with SyntaxError', () => {
    const syntax = { name: 'SyntaxError' };
    expect(() => new WebSocket('ftp://127.0.0.1/')).toThrow(expect.objectContaining(syntax));
    expect(() => new WebSocket('ws://127.0.0.1/#frag')).toThrow(expect.objectContaining(syntax));
    expect(() => new WebSocket('not a url')).toThrow(expect.objectContaining(syntax));
    expect(() => new WebSocket('ws://127.0.0.1/', ['a', 'a'])).toThrow(expect.objectContaining(syntax));
    expect(() => new WebSocket('ws://127.0.0.1/', 'bad proto')).toThrow(expect.objectContaining(syntax));
    expect(() => new WebSocket('ws://127.0.0.1/', '')).toThrow(DOMException);
  });

  it('send() before open throws InvalidStateError', async () => {
    const s = await server();
    const ws = socket(s.ws);
    expect(() => ws.send('x')).toThrow(expect.objectContaining({ name: 'InvalidStateError' }));
    expect(() => ws.send('x')).toThrow(DOMException);
    await opened(ws);
  });

  it.each([
    ['a non-101 answer', (_req: unknown, _accept: string) => 'HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n'],
    ['a wrong Sec-WebSocket-Accept', () => 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: nope\r\n\r\n'],
    ['an unoffered subprotocol', (_r: unknown, a: string) => `HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${a}\r\nSec-WebSocket-Protocol: other\r\n\r\n`],
    ['an unoffered extension', (_r: unknown, a: string) => `HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${a}\r\nSec-WebSocket-Extensions: x-zip\r\n\r\n`],
  ])('fails the handshake on %s: error, then close 1006', async (_name, answer) => {
    const s = await server(() => {}, { answer });
    const ws = socket(s.ws);
    const events: string[] = [];
    ws.onopen = () => events.push('open');
    ws.onerror = (e) => events.push(`error:${(e as ErrorEvent).error instanceof Error}`);
    const close = await closeOf(ws);
    expect(events).toEqual(['error:true']);
    expect([close.code, close.wasClean, ws.readyState]).toEqual([1006, false, WebSocket.CLOSED]);
  });

  it('close() while connecting fails the connection', async () => {
    const s = await server();
    const ws = socket(s.ws);
    const error = once(ws, 'error');
    ws.close();
    expect(ws.readyState).toBe(WebSocket.CLOSING);
    const close = await closeOf(ws);
    await error;
    expect([close.code, close.wasClean]).toEqual([1006, false]);
  });

  it('runs over a custom connector (the bridged transport) and through interceptors', async () => {
    const s = await server();
    const inner = buildConnector({});
    let connections = 0;
    const client = cleanup.track(
      new Client(s.origin, {
        connect: (opts, cb) => {
          connections++;
          inner(opts, cb);
        },
      }),
    );
    const paths: string[] = [];
    const dispatcher = client.compose((dispatch) => (opts, handler) => {
      paths.push(opts.path);
      return dispatch(opts, handler);
    });
    const ws = await opened(socket(`${s.ws}/via-connector`, { dispatcher }));
    ws.send('bridged');
    expect((await nextMessage(ws)).data).toBe('bridged');
    expect([connections, paths]).toEqual([1, ['/via-connector']]);
  });

  it('runs over TLS (wss:) with a ferro Agent', async () => {
    const dir = join(import.meta.dirname, 'fixtures', 'tls');
    const tls = { key: readFileSync(join(dir, 'localhost.key'), 'utf8'), cert: readFileSync(join(dir, 'localhost.pem'), 'utf8') };
    const s = await server(undefined, { tls });
    const dispatcher = cleanup.track(new Agent({ connect: { ca: readFileSync(join(dir, 'ca.pem'), 'utf8') } }));
    const ws = await opened(socket(s.ws, { dispatcher }));
    ws.send('over tls');
    expect((await nextMessage(ws)).data).toBe('over tls');
  });
});

describe('WebSocket: messages', () => {
  it('echoes text and binary in both binary types', async () => {
    const s = await server();
    const ws = await opened(socket(s.ws));
    const next = inbox(ws);
    ws.send('héllo');
    const text = await next();
    expect(text).toBeInstanceOf(MessageEvent);
    expect([text.data, text.origin]).toEqual(['héllo', s.ws]);
    ws.send(new Uint8Array([1, 2, 3]));
    const blob = (await next()).data as Blob;
    expect(blob).toBeInstanceOf(Blob);
    expect([...new Uint8Array(await blob.arrayBuffer())]).toEqual([1, 2, 3]);
    ws.binaryType = 'arraybuffer';
    ws.send(new Uint16Array([0x0102, 0x0304]).subarray(1));
    const ab = (await next()).data as ArrayBuffer;
    expect(ab).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(ab)).toEqual(Buffer.from(new Uint16Array([0x0304]).buffer));
    ws.send(new Blob(['from a blob']));
    ws.send('after the blob');
    expect(Buffer.from((await next()).data as ArrayBuffer).toString()).toBe('from a blob');
    expect((await next()).data).toBe('after the blob');
    ws.binaryType = 'bogus' as never;
    expect(ws.binaryType).toBe('blob');
  });

  it('bytes sent behind a Blob are the bytes at send(), whatever the caller does next', async () => {
    const s = await server();
    const ws = await opened(socket(s.ws));
    ws.binaryType = 'arraybuffer';
    const next = inbox(ws);
    const bytes = new Uint8Array([0x61]);
    ws.send(new Blob([bytes]));
    ws.send(bytes);
    bytes[0] = 1;
    expect(new Uint8Array((await next()).data as ArrayBuffer)).toEqual(new Uint8Array([0x61]));
    expect(new Uint8Array((await next()).data as ArrayBuffer)).toEqual(new Uint8Array([0x61]));
  });

  it('sends of one tick, small and large, text and binary, with a ping among them, arrive in order', async () => {
    // Small sends are staged and handed over together, larger ones go alone: order must hold
    // across both, and across a stage that fills up within the tick.
    const s = await server();
    const ws = await opened(socket(s.ws));
    ws.binaryType = 'arraybuffer';
    const sizes = [0, 1, 100, 4096, 4097, 5000, 3, 65_536, 4000, 4000, 4000, 4000, 4000, 7, 125];
    const sent = sizes.map((n, i) => (i % 3 === 2 ? 'é'.repeat(n >> 1) : Buffer.alloc(n, i)));
    const got: (string | Buffer)[] = [];
    const all = new Promise<void>((resolve) => {
      ws.onmessage = (e) => {
        got.push(typeof e.data === 'string' ? e.data : Buffer.from(e.data as ArrayBuffer));
        if (got.length === sent.length) resolve();
      };
    });
    let expected = 0;
    sent.forEach((m, i) => {
      ws.send(m);
      if (i === 5) ping(ws, Buffer.from('p'));
      expected += typeof m === 'string' ? Buffer.byteLength(m) : m.length;
    });
    expect(ws.bufferedAmount).toBe(expected);
    await all;
    expect(got).toEqual(sent);
    expect(ws.bufferedAmount).toBe(0);
  });

  it('carries a 16 MiB message both ways', async () => {
    const s = await server();
    const ws = await opened(socket(s.ws));
    ws.binaryType = 'arraybuffer';
    const big = Buffer.alloc(16 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff;
    ws.send(big);
    const got = Buffer.from((await nextMessage(ws)).data as ArrayBuffer);
    expect(got.length).toBe(big.length);
    expect(got.equals(big)).toBe(true);
  });

  it('reassembles fragmented server messages around control frames and answers pings', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p = await peer;
    const pings: string[] = [];
    ws.addEventListener('ping', (e) => pings.push(String((e as MessageEvent<Buffer>).data)));
    p.send(
      Buffer.concat([
        frame(1, 'frag', { fin: false }),
        frame(9, 'are you there'),
        frame(0, 'men', { fin: false }),
        frame(0, 'ted'),
      ]),
    );
    expect((await nextMessage(ws)).data).toBe('fragmented');
    expect(pings).toEqual(['are you there']);
    const pong = await p.nextFrame();
    expect(pong).toMatchObject({ opcode: 10, masked: true, fin: true });
    expect(String(pong!.payload)).toBe('are you there');
  });

  it('ping() sends a ping and the pong arrives as an event', async () => {
    const s = await server();
    const ws = await opened(socket(s.ws));
    ping(ws, Buffer.from('keepalive'));
    const pong = (await once(ws, 'pong'))[0] as MessageEvent<Buffer>;
    expect(String(pong.data)).toBe('keepalive');
    expect(() => ping(ws, Buffer.alloc(126))).toThrow(TypeError);
    expect(() => ping({} as WebSocket)).toThrow(TypeError);
  });

  it('the on* properties replace each other and fire', async () => {
    const s = await server();
    const ws = socket(s.ws);
    const seen: string[] = [];
    ws.onopen = () => seen.push('first');
    ws.onopen = function (this: WebSocket) {
      seen.push(this === ws ? 'second' : 'wrong this');
    };
    expect(typeof ws.onopen).toBe('function');
    await once(ws, 'open');
    ws.onmessage = null;
    expect(ws.onmessage).toBe(null);
    expect(seen).toEqual(['second']);
  });

  it('an on* property given a non-callable object keeps it, and it does nothing (WebIDL EventHandler, as undici)', async () => {
    const s = await server();
    const ws = socket(s.ws);
    const notCallable = { handleEvent: () => expect.unreachable('an EventHandler is never an EventListener object') };
    ws.onopen = notCallable as unknown as WebSocket['onopen'];
    expect(ws.onopen).toBe(notCallable);
    await once(ws, 'open');
    ws.onopen = 'x' as unknown as WebSocket['onopen'];
    expect(ws.onopen).toBe(null);
  });
});

describe('WebSocket: closing', () => {
  it('a close we start is clean, with our code and reason echoed', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    ws.close(4000, 'bye');
    expect(ws.readyState).toBe(WebSocket.CLOSING);
    ws.send('ignored while closing');
    const p = await peer;
    const got = await p.nextFrame();
    expect(got!.opcode).toBe(8);
    expect([got!.payload.readUInt16BE(0), String(got!.payload.subarray(2))]).toEqual([4000, 'bye']);
    p.send(got!.payload.length ? frame(8, got!.payload) : closeFrame());
    expect(await p.nextFrame()).toBe(null); // the client half-closed after the handshake
    p.socket.end();
    const close = await closeOf(ws);
    expect(close).toBeInstanceOf(CloseEvent);
    expect([close.code, close.reason, close.wasClean, ws.readyState]).toEqual([4000, 'bye', true, WebSocket.CLOSED]);
  });

  it('a close the server starts is answered and clean', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p = await peer;
    p.send(closeFrame(1001, 'going away'));
    const answer = await p.nextFrame();
    expect(answer!.opcode).toBe(8);
    expect(answer!.payload.readUInt16BE(0)).toBe(1001);
    p.socket.end();
    const close = await closeOf(ws);
    expect([close.code, close.reason, close.wasClean]).toEqual([1001, 'going away', true]);
  });

  it('close(undefined, reason) sends 1000 with the reason; close() sends no status', async () => {
    const cases: [[number?, string?], string][] = [
      [[undefined, 'why'], '\x03\xe8why'],
      [[], ''],
    ];
    for (const [args, payload] of cases) {
      const { onPeer, peer } = peerPromise();
      const s = await server(onPeer);
      const ws = await opened(socket(s.ws));
      ws.close(...args);
      const f = await (await peer).nextFrame();
      expect([f!.opcode, f!.payload.toString('latin1')]).toEqual([8, payload]);
    }
  });

  it('a close frame without a code reports 1005', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p = await peer;
    p.send(closeFrame());
    await p.nextFrame();
    p.socket.end();
    const close = await closeOf(ws);
    expect([close.code, close.wasClean]).toEqual([1005, true]);
  });

  it('TCP loss without a close frame is 1006, not clean, after an error event', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const order: string[] = [];
    ws.addEventListener('error', (e) => order.push(e instanceof ErrorEvent ? 'error' : 'not an ErrorEvent'));
    (await peer).socket.destroy();
    const close = await closeOf(ws);
    order.push('close');
    expect(order).toEqual(['error', 'close']);
    expect([close.code, close.wasClean]).toEqual([1006, false]);
  });

  it('validates close() arguments', async () => {
    const s = await server();
    const ws = await opened(socket(s.ws));
    expect(() => ws.close(999)).toThrow(expect.objectContaining({ name: 'InvalidAccessError' }));
    expect(() => ws.close(1001)).toThrow(expect.objectContaining({ name: 'InvalidAccessError' }));
    expect(() => ws.close(5000)).toThrow(expect.objectContaining({ name: 'InvalidAccessError' }));
    expect(() => ws.close(1000, 'x'.repeat(124))).toThrow(expect.objectContaining({ name: 'SyntaxError' }));
    expect(() => ws.close(1000, 'é'.repeat(62))).toThrow(DOMException);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close(3000, 'x'.repeat(123));
    expect((await closeOf(ws)).code).toBe(3000);
  });
});
