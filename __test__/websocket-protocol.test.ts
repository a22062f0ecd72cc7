// WebSocket protocol failures, permessage-deflate and backpressure, against the RFC 6455 server in
// fixtures/ws-server.ts: each bad server frame must close with the code RFC 6455 §7.4.1 names.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { WebSocket, type ErrorEvent } from '../ts/index.js';
import { deflateMessage, echo, frame, type Peer } from './fixtures/ws-server.js';
import { wsTestKit } from './fixtures/ws-client.js';

const { server, socket, opened, inbox, closeOf, peerPromise } = wsTestKit();

/** Sends `bytes` from the server; resolves with the payload of the client's close frame. */
async function failFrame(bytes: Buffer, init?: ConstructorParameters<typeof WebSocket>[1]): Promise<Buffer> {
  const { onPeer, peer } = peerPromise();
  const s = await server(onPeer);
  const ws = await opened(socket(s.ws, init));
  const errors: ErrorEvent[] = [];
  ws.addEventListener('error', (e) => errors.push(e as ErrorEvent));
  const p = await peer;
  p.send(bytes);
  const f = await p.nextFrame();
  const closed = closeOf(ws);
  p.socket.end();
  const close = await closed;
  expect(f!.opcode).toBe(8);
  expect(errors).toHaveLength(1);
  expect(errors[0]!.error).toBeInstanceOf(TypeError);
  expect([close.code, close.wasClean]).toEqual([1006, false]);
  return f!.payload;
}

/** The close code the client fails the connection with when the server sends `bytes`. */
const failWith = async (bytes: Buffer, init?: ConstructorParameters<typeof WebSocket>[1]): Promise<number> =>
  (await failFrame(bytes, init)).readUInt16BE(0);

describe('WebSocket: failing the connection', () => {
  it('invalid UTF-8 in a text message → 1007', async () => {
    expect(await failWith(frame(1, Buffer.from([0x68, 0xc3, 0x28])))).toBe(1007);
  });

  it('invalid UTF-8 split across fragments → 1007', async () => {
    expect(await failWith(Buffer.concat([frame(1, 'ok', { fin: false }), frame(0, Buffer.from([0xff]))]))).toBe(1007);
  });

  it('a masked server frame → 1002', async () => {
    expect(await failWith(frame(1, 'masked', { mask: true }))).toBe(1002);
  });

  it('reserved bits, unknown opcodes, long or fragmented control frames → 1002', async () => {
    expect(await failWith(Buffer.from([0x81 | 0x20, 0]))).toBe(1002);
    expect(await failWith(Buffer.from([0x83, 0]))).toBe(1002);
    expect(await failWith(frame(9, Buffer.alloc(126)))).toBe(1002);
    expect(await failWith(frame(9, 'x', { fin: false }))).toBe(1002);
    expect(await failWith(frame(0, 'no message to continue'))).toBe(1002);
    expect(await failWith(frame(1, 'x', { rsv1: true }))).toBe(1002); // no deflate negotiated
  });

  it('a message over maxPayloadSize → 1009', async () => {
    expect(await failWith(frame(2, Buffer.alloc(2000)), { maxPayloadSize: 1000 })).toBe(1009);
    expect(await failWith(Buffer.concat([frame(2, Buffer.alloc(600), { fin: false }), frame(0, Buffer.alloc(600))]), { maxPayloadSize: 1000 })).toBe(1009);
  });

  it("the close frame gives undici's reason, as servers log it", async () => {
    const reason = async (bytes: Buffer, init?: ConstructorParameters<typeof WebSocket>[1]) =>
      (await failFrame(bytes, init)).subarray(2).toString();
    expect(await reason(frame(1, 'masked', { mask: true }))).toBe('Frame cannot be masked');
    expect(await reason(frame(1, Buffer.from([0xff])))).toBe('Received invalid UTF-8 in text frame.');
    expect(await reason(frame(2, Buffer.alloc(2000)), { maxPayloadSize: 1000 })).toBe('Payload size exceeds maximum allowed size');
    const fragments = Buffer.concat([frame(2, 'a', { fin: false }), frame(0, 'a', { fin: false }), frame(0, 'a')]);
    expect(await reason(fragments, { maxFragments: 2 })).toBe('Too many message fragments');
  });

  it('rejects a bad maxPayloadSize at construction', () => {
    expect(() => new WebSocket('ws://127.0.0.1:1/', { maxPayloadSize: -1 })).toThrow(TypeError);
  });
});

describe('WebSocket: permessage-deflate', () => {
  const deflateServer = (answer: string) => {
    const { onPeer, peer } = peerPromise();
    return { peer, start: () => server(onPeer, { extensions: (offer) => (offer.includes('permessage-deflate') ? answer : undefined) }) };
  };

  it('compresses large messages and inflates the server’s', async () => {
    const answer = 'permessage-deflate; client_no_context_takeover; server_no_context_takeover';
    const { peer, start } = deflateServer(answer);
    const s = await start();
    const ws = await opened(socket(s.ws));
    expect(ws.extensions).toBe(answer);
    const p = await peer;
    const text = 'compress me please '.repeat(300);
    ws.send(text);
    ws.send('tiny');
    const frames = [await p.nextFrame(), await p.nextFrame()];
    expect(frames.map((f) => f!.rsv1)).toEqual([true, false]);
    expect(frames[0]!.payload.length).toBeLessThan(200);
    void echo(p); // from here on the server echoes, decompressing what it gets
    ws.binaryType = 'arraybuffer';
    ws.send(text);
    const next = inbox(ws);
    expect((await next()).data).toBe(text);
    p.send(frame(1, deflateMessage(Buffer.from('from the server '.repeat(100))), { rsv1: true }));
    p.send(frame(2, deflateMessage(Buffer.from([1, 2, 3])), { rsv1: true }));
    expect((await next()).data).toBe('from the server '.repeat(100));
    expect([...new Uint8Array((await next()).data as ArrayBuffer)]).toEqual([1, 2, 3]);
  });

  it('bounds decompression by maxPayloadSize → 1009', async () => {
    const { peer, start } = deflateServer('permessage-deflate');
    const s = await start();
    const ws = await opened(socket(s.ws, { maxPayloadSize: 64 * 1024 }));
    const p = await peer;
    const closed = closeOf(ws);
    const bomb = deflateMessage(Buffer.alloc(10 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(20_000);
    p.send(frame(2, bomb, { rsv1: true }));
    const f = await p.nextFrame();
    expect(f!.payload.readUInt16BE(0)).toBe(1009);
    p.socket.end();
    expect((await closed).code).toBe(1006);
  });

  it('maxPayloadSize 0 (no limit) inflates a compressed message', async () => {
    const { peer, start } = deflateServer('permessage-deflate');
    const s = await start();
    const ws = await opened(socket(s.ws, { maxPayloadSize: 0 }));
    const next = inbox(ws);
    const p = await peer;
    p.send(frame(2, deflateMessage(Buffer.alloc(2 * 1024 * 1024, 0x41)), { rsv1: true }));
    expect(((await next()).data as Blob).size).toBe(2 * 1024 * 1024);
  });

  it('corrupt compressed data → 1007', async () => {
    const { peer, start } = deflateServer('permessage-deflate');
    const s = await start();
    const ws = await opened(socket(s.ws));
    const p = await peer;
    const closed = closeOf(ws);
    p.send(frame(2, Buffer.from([0xff, 0xff, 0xff, 0xff]), { rsv1: true }));
    expect((await p.nextFrame())!.payload.readUInt16BE(0)).toBe(1007);
    p.socket.end();
    await closed;
  });
});

/** Waits until `cond()` holds, checking once per event-loop turn. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

describe('WebSocket: backpressure', () => {
  it('bufferedAmount counts what is not yet written and falls back to 0', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p: Peer = await peer;
    p.socket.pause(); // the server stops reading: the client's writes back up
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let i = 0; i < 32; i++) ws.send(chunk);
    expect(ws.bufferedAmount).toBe(32 * chunk.length);
    // Several event-loop turns later the kernel and engine buffers are full; most is still queued.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(ws.bufferedAmount).toBeGreaterThan(8 * chunk.length);
    p.socket.resume();
    for (let i = 0; i < 32; i++) expect((await p.nextMessage())!.data.length).toBe(chunk.length);
    await until(() => ws.bufferedAmount === 0);
    ws.send('abc');
    expect(ws.bufferedAmount).toBe(3);
    await until(() => ws.bufferedAmount === 0);
  });
});

describe('WebSocket: message events after close()', () => {
  it('stops delivering messages once close() was called', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p = await peer;
    const got: unknown[] = [];
    ws.onmessage = (e) => {
      got.push((e as MessageEvent).data);
      ws.close();
    };
    p.send(Buffer.concat([frame(1, 'first'), frame(1, 'second')]));
    await p.nextFrame(); // the client's close
    // Listened for before it can happen: under load the socket may close before closeOf() resolves.
    const socketClosed = p.socket.destroyed ? Promise.resolve() : once(p.socket, 'close');
    p.send(frame(8, Buffer.from([0x03, 0xe8])));
    p.socket.end();
    const close = await closeOf(ws);
    expect(got).toEqual(['first']);
    expect(close.wasClean).toBe(true);
    await socketClosed;
  });
});

describe('WebSocket: writes of one tick go out together', () => {
  it('sends, a pong reply and close() made in one tick reach the server whole and in order', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const ws = await opened(socket(s.ws));
    const p = await peer;
    ws.onmessage = () => {
      ws.send('a');
      ws.send(Buffer.from('b'));
      ws.send('c'.repeat(20_000)); // past the size where the codec's output moves out instead of being copied
      expect(ws.bufferedAmount).toBe(20_002);
      ws.close(1000, 'bye');
    };
    // A ping, then a message: the pong reply is queued before the handler's frames.
    p.send(Buffer.concat([frame(9, 'hi'), frame(1, 'go')]));
    const got: [number, string, boolean][] = [];
    for (let i = 0; i < 5; i++) {
      const f = (await p.nextFrame())!;
      got.push([f.opcode, f.opcode === 8 ? `${f.payload.readUInt16BE(0)} ${f.payload.subarray(2)}` : f.payload.toString(), f.masked]);
    }
    expect(got).toEqual([
      [10, 'hi', true],
      [1, 'a', true],
      [2, 'b', true],
      [1, 'c'.repeat(20_000), true],
      [8, '1000 bye', true],
    ]);
    p.send(frame(8, Buffer.from([0x03, 0xe8])));
    p.socket.end();
    const close = await closeOf(ws);
    expect(close.wasClean).toBe(true);
    expect(ws.bufferedAmount).toBe(0);
  });
});
