// WebSocketStream: messages through a ReadableStream / WritableStream pair, closing, failures,
// and read backpressure reaching the server (the client stops reading its socket).
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { WebSocketError, WebSocketStream } from '../ts/index.js';
import { BodyProgress, serverStaysBlocked } from './fixtures/servers.js';
import { frame, type Peer } from './fixtures/ws-server.js';
import { wsTestKit } from './fixtures/ws-client.js';

const { cleanup, server, peerPromise } = wsTestKit();

function stream(url: string, opts?: ConstructorParameters<typeof WebSocketStream>[1]): WebSocketStream {
  const wss = new WebSocketStream(url, opts);
  cleanup.push(async () => {
    wss.close();
    await wss.closed.catch(() => {});
  });
  return wss;
}

/** Writes `total` copies of `message` from the server, each after the last drained; resolves once
 *  the server is blocked and stays blocked (the client stopped reading) or all went out. */
async function sendUntilStalled(p: Peer, message: Buffer, total: number) {
  const progress = new BodyProgress();
  let sent = 0;
  const writing = (async () => {
    for (; sent < total; sent++) {
      if (p.socket.destroyed) return;
      if (!p.socket.write(message)) {
        progress.waiting = true;
        progress.emit('blocked');
        await once(p.socket, 'drain');
        progress.waiting = false;
        progress.emit('drain');
      }
    }
  })();
  await Promise.race([writing, serverStaysBlocked(progress)]);
  return { sent: () => sent, writing };
}

describe('WebSocketStream', () => {
  it('writes and reads text and bytes, then closes cleanly', async () => {
    const s = await server(undefined, { protocol: (o) => o[0] });
    const wss = stream(s.ws, { protocols: ['p1'] });
    expect(wss.url).toBe(`${s.ws}/`);
    expect(Object.prototype.toString.call(wss)).toBe('[object WebSocketStream]');
    expect(Object.prototype.toString.call(new WebSocketError())).toBe('[object WebSocketError]');
    const { readable, writable, protocol, extensions } = await wss.opened;
    expect([protocol, extensions]).toEqual(['p1', '']);
    const writer = writable.getWriter();
    const reader = readable.getReader();
    await writer.write('hello');
    await writer.write(new Uint8Array([9, 8, 7]));
    expect(await reader.read()).toEqual({ value: 'hello', done: false });
    const bin = await reader.read();
    expect(bin.value).toBeInstanceOf(Uint8Array);
    expect([...(bin.value as Uint8Array)]).toEqual([9, 8, 7]);
    // Neither a string nor a BufferSource: sent as its string (WebIDL), as undici does.
    await writer.write(5);
    expect(await reader.read()).toEqual({ value: '5', done: false });
    wss.close({ closeCode: 4001, reason: 'done' });
    expect(await wss.closed).toEqual({ closeCode: 4001, reason: 'done' });
    expect(await reader.read()).toEqual({ value: undefined, done: true });
    await expect(writer.write('late')).rejects.toMatchObject({ name: 'InvalidStateError', message: 'A closed WebSocketStream cannot be written to' });
  });

  it('rejects closed with a WebSocketError (1006) when the connection drops', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const wss = stream(s.ws);
    const { readable } = await wss.opened;
    (await peer).socket.destroy();
    const err = (await wss.closed.catch((e: unknown) => e)) as WebSocketError;
    expect(err).toBeInstanceOf(WebSocketError);
    expect(err).toBeInstanceOf(DOMException);
    expect([err.message, err.closeCode]).toEqual(['unclean close', 1006]);
    await expect(readable.getReader().read()).rejects.toBeInstanceOf(WebSocketError);
  });

  it('rejects opened and closed when the handshake fails', async () => {
    const s = await server(() => {}, { answer: () => 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n' });
    const wss = new WebSocketStream(s.ws);
    const opened = (await wss.opened.catch((e: unknown) => e)) as WebSocketError;
    const closed = (await wss.closed.catch((e: unknown) => e)) as WebSocketError;
    expect(opened).toBeInstanceOf(WebSocketError);
    expect(opened.message).toBe('Socket never opened');
    expect((opened.cause as Error).message).toMatch(/404/);
    expect(closed).toBeInstanceOf(WebSocketError);
    expect([closed.message, closed.closeCode]).toEqual(['unclean close', 1006]);
  });

  it('an aborted signal rejects with its reason', async () => {
    const s = await server();
    const ac = new AbortController();
    const wss = new WebSocketStream(s.ws, { signal: ac.signal });
    const reason = new Error('changed my mind');
    ac.abort(reason);
    await expect(wss.opened).rejects.toBe(reason);
    await expect(wss.closed).rejects.toBe(reason);
    // Already aborted: no connection, both promises rejected with the reason (not a throw).
    const late = new WebSocketStream(s.ws, { signal: ac.signal });
    await expect(late.opened).rejects.toBe(reason);
    await expect(late.closed).rejects.toBe(reason);
  });

  it('WebSocketError validates its close code and reason', () => {
    expect(new WebSocketError('x', { reason: 'why' }).closeCode).toBe(1000);
    expect(new WebSocketError('x').closeCode).toBe(null);
    expect(() => new WebSocketError('x', { closeCode: 1006 })).toThrow(expect.objectContaining({ name: 'InvalidAccessError' }));
    expect(() => new WebSocketError('x', { closeCode: 1000, reason: 'r'.repeat(124) })).toThrow(expect.objectContaining({ name: 'SyntaxError' }));
  });

  it('aborting the writable with a WebSocketError closes with its code', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const wss = stream(s.ws);
    const { writable } = await wss.opened;
    await writable.abort(new WebSocketError('bye', { closeCode: 3333, reason: 'abort' }));
    const f = await (await peer).nextFrame();
    expect([f!.opcode, f!.payload.readUInt16BE(0), String(f!.payload.subarray(2))]).toEqual([8, 3333, 'abort']);
  });

  it('stops reading the socket while the reader lags, then delivers everything', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const wss = stream(s.ws);
    const { readable } = await wss.opened;
    const p = await peer;
    // 64 MiB in all: far more than the reader's queue, the engine's and the kernel's buffers hold.
    const total = 1024;
    const size = 64 * 1024;
    const message = frame(2, Buffer.alloc(size, 1));
    const filled = await sendUntilStalled(p, message, total);
    expect(filled.sent()).toBeLessThan(total);
    const reader = readable.getReader();
    for (let i = 0; i < total; i++) expect(((await reader.read()).value as Uint8Array).length).toBe(size);
    await filled.writing;
  });

  it('close() while the reader lags still completes the closing handshake', async () => {
    const { onPeer, peer } = peerPromise();
    const s = await server(onPeer);
    const wss = stream(s.ws);
    await wss.opened;
    const p = await peer;
    const filled = await sendUntilStalled(p, frame(2, Buffer.alloc(64 * 1024)), 1024);
    expect(filled.sent()).toBeLessThan(1024); // the client stopped reading
    wss.close({ closeCode: 1000 });
    await filled.writing;
    const got = await p.nextFrame();
    expect(got!.opcode).toBe(8);
    p.send(frame(8, got!.payload));
    p.socket.end();
    expect(await wss.closed).toEqual({ closeCode: 1000, reason: '' });
  });
});
