// WebSocket limits against a hostile server (issue 28 items 6 and 12): a raw `net` server that
// does the opening handshake by hand, then writes exact frame bytes and never reads what the
// client sends. Pings it floods must not pile up pongs in the client (GHSA-9fm3-97px-rjf6); a
// message over maxPayloadSize closes with 1009, one in more than maxFragments frames with 1008.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { getDefaultHighWaterMark } from 'node:stream';
import {
  Agent,
  BalancedPool,
  EnvHttpProxyAgent,
  errors,
  MockAgent,
  ProxyAgent,
  RetryAgent,
  RoundRobinPool,
  Socks5ProxyAgent,
  WebSocket,
  WebSocketStream,
  type CloseEvent,
  type ErrorEvent,
  type MessageEvent,
} from '../ts/index.js';
import { frame } from './fixtures/ws-server.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const { InvalidArgumentError } = errors;

/**
 * A server that answers the opening handshake, hands its socket to `onOpen` and reads nothing
 * more: the client's frames stay in the kernel's buffers, then in the client's write queue.
 */
async function rawServer(onOpen: (socket: Socket) => void): Promise<string> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => {});
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      const key = /sec-websocket-key: *(\S+)/i.exec(head.slice(0, end))![1]!;
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
      onOpen(socket);
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set<Socket>();
  server.on('connection', (s) => sockets.add(s));
  cleanup.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return `ws://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

/** Resolves with the error (if any) and close events of `ws`. */
function ending(ws: WebSocket): Promise<{ error: ErrorEvent | null; close: CloseEvent }> {
  let error: ErrorEvent | null = null;
  ws.addEventListener('error', (e) => (error = e as ErrorEvent));
  return once(ws, 'close').then(([close]) => ({ error, close: close as CloseEvent }));
}

/** A socket closed after the test; its server's cleanup (which runs next) ends the connection. */
function socket(url: string, init?: ConstructorParameters<typeof WebSocket>[1]): WebSocket {
  const ws = new WebSocket(url, init);
  cleanup.push(async () => ws.close());
  return ws;
}

/** 64 KiB of pings with 125-byte payloads: each one asks the client for a 131-byte pong. */
const PING = frame(9, Buffer.alloc(125, 0x70));
const PONG_SIZE = 131;
const PINGS = Buffer.concat(Array.from({ length: Math.floor(65536 / PING.length) }, () => PING));

/**
 * Writes pings as fast as `socket` takes them, up to `cap` bytes; resolves with the bytes sent
 * once the client stops reading (a write waits for a drain that does not come) or the cap is hit.
 */
function floodPings(socket: Socket, cap: number, stop: Promise<unknown>): Promise<number> {
  let sent = 0;
  let stopped = false;
  void stop.then(() => (stopped = true));
  return new Promise((resolve) => {
    const pump = (): void => {
      while (!stopped && sent < cap) {
        sent += PINGS.length;
        if (!socket.write(PINGS)) return void socket.once('drain', pump);
      }
      resolve(sent);
    };
    socket.on('close', () => resolve(sent));
    pump();
  });
}

describe('WebSocket: a server that floods pings and never reads', () => {
  it('stops reading while its pongs wait, then fails the connection with 1008', async () => {
    // Without backpressure the client reads everything and keeps a pong for every ping: the
    // server gets to write the whole cap. With it, the client reads until its write queue is full
    // and the server's writes stop at what the kernel's buffers hold.
    const CAP = 64 * 1024 * 1024;
    let sent!: Promise<number>;
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const url = await rawServer((s) => {
      sent = floodPings(s, CAP, ended);
      opened();
    });
    const ws = socket(url, { stalledWriteTimeout: 500 });
    const ended = ending(ws);
    await open;
    const bytes = await sent;
    expect(bytes).toBeLessThan(CAP);
    const { error, close } = await ended;
    expect(error?.error).toBeInstanceOf(TypeError);
    // What waited in the client's write queue when it gave up: the queue's high-water mark (Node's
    // default: 16 KiB on Node 20, 64 KiB from 22) and at most one reply budget (16 KiB) past it,
    // not a pong for every ping the server sent.
    const queued = Number(/left (\d+) bytes/.exec(error!.message)?.[1]);
    expect(error?.message).toMatch(/\(1008\)/);
    expect(queued).toBeLessThan(getDefaultHighWaterMark(false) + 16 * 1024 + PONG_SIZE);
    expect([close.code, close.wasClean]).toEqual([1006, false]);
  });
});

/**
 * Resolves once `ws` has answered no ping for two checks `quietMs` apart (the checks run on the
 * event loop that delivers the pings, so a starved loop delays both alike). A client whose pongs
 * fill its write queue stops reading: there is no event for that, only pings that stop coming.
 */
function stopsAnswering(ws: WebSocket, quietMs: number): Promise<number> {
  let answered = 0;
  ws.addEventListener('ping', () => answered++);
  return new Promise((resolve) => {
    let seen = -1;
    let quiet = 0;
    const check = (): void => {
      quiet = answered > 0 && answered === seen ? quiet + 1 : 0;
      seen = answered;
      if (quiet === 2) resolve(answered);
      else setTimeout(check, quietMs);
    };
    check();
  });
}

/**
 * A connection the stall rule must fail after `ms`: its server floods pings and never reads.
 * Resolves once it has, with the failure's message: the engine's stall timers of `ms` armed
 * before this one's have had their turn too.
 */
async function stalledWitness(ms: number): Promise<string> {
  const url = await rawServer((s) => void floodPings(s, 64 * 1024 * 1024, new Promise(() => {})));
  const { error } = await ending(socket(url, { stalledWriteTimeout: ms }));
  return error!.message;
}

describe('WebSocket: a server that reads late', () => {
  it('is not failed: reading resumes when the queue drains, and every ping is answered', async () => {
    // The server reads nothing until the client has stopped reading (its pongs fill its write
    // queue and the stall rule is armed), then reads on: the rule must let the connection be.
    // The rule's window bounds how late the server's reads may come, so it is seconds: under
    // load the event loop here went up to 0.6 s without a turn, and with a 200 ms window the
    // rule failed a third of the runs at load 6-10 on 2 cores.
    const TOTAL = 32 * 1024 * 1024;
    const pingCount = Math.ceil(TOTAL / PINGS.length) * (PINGS.length / PING.length);
    let server!: Socket;
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const url = await rawServer((s) => {
      server = s;
      let sent = 0;
      const pump = (): void => {
        while (sent < TOTAL) {
          sent += PINGS.length;
          if (!s.write(PINGS)) return void s.once('drain', pump);
        }
        s.write(frame(1, 'done'));
      };
      pump();
      opened();
    });
    const ws = socket(url, { stalledWriteTimeout: 5_000 });
    let errors = 0;
    ws.addEventListener('error', () => errors++);
    const ended = Promise.race([once(ws, 'message'), once(ws, 'close')]);
    const stopped = stopsAnswering(ws, 100);
    await open;
    // The client answered more pings than its queue holds replies for, and stopped reading.
    expect((await stopped) * PONG_SIZE).toBeGreaterThan(16 * 1024);
    let pongs = 0;
    let tail = 0;
    let allAnswered!: () => void;
    const answered = new Promise<void>((r) => (allAnswered = r));
    server.on('data', (chunk: Buffer) => {
      // Pongs are masked frames of PONG_SIZE bytes: count them by length.
      tail += chunk.length;
      pongs += Math.floor(tail / PONG_SIZE);
      tail %= PONG_SIZE;
      if (pongs === pingCount) allAnswered();
    });
    server.resume();
    // Failing the connection (the bug) ends the wait too, instead of leaving it to the test timeout.
    const [event] = await ended;
    expect(errors).toBe(0);
    expect((event as MessageEvent).data).toBe('done');
    expect(ws.readyState).toBe(WebSocket.OPEN);
    await answered;
    expect(pongs).toBe(pingCount);
  });
});

describe('WebSocket: a large upload to a server that reads late', () => {
  it('pauses reading while a pong waits behind it, without failing the connection', async () => {
    // The queue is full of the application's own message when the ping's pong joins it: that is
    // the application's backpressure to handle (bufferedAmount), not a server refusing to read.
    const SIZE = 32 * 1024 * 1024;
    const STALL_MS = 100;
    let server!: Socket;
    const url = await rawServer((s) => {
      server = s;
      // The upload has started: ask for a pong. Nothing is read until the test says so.
      s.once('readable', () => s.write(frame(9, Buffer.alloc(0))));
    });
    const ws = socket(url, { stalledWriteTimeout: STALL_MS });
    let errors = 0;
    ws.addEventListener('error', () => errors++);
    await once(ws, 'open');
    ws.send(new Uint8Array(SIZE));
    // Failing the connection (the bug) ends the wait too, instead of leaving it to the test timeout.
    const ended = Promise.race([once(ws, 'message'), once(ws, 'close')]);
    await Promise.race([once(ws, 'ping'), ended]);
    // The pong waits behind the message, which has not gone out.
    expect(ws.bufferedAmount).toBe(SIZE);
    // Read nothing until the stall rule has failed a connection armed after this one's pong.
    expect(await stalledWitness(STALL_MS)).toMatch(/\(1008\)/);
    expect(ws.bufferedAmount).toBe(SIZE);
    let got = 0;
    server.on('data', (chunk: Buffer) => {
      got += chunk.length;
      // The message (14-byte header) and the 6-byte pong.
      if (got === 14 + SIZE + 6) server.write(frame(1, 'done'));
    });
    server.resume();
    const [event] = await ended;
    expect(errors).toBe(0);
    expect((event as MessageEvent).data).toBe('done');
  });
});

/** The status code of the first frame the client sent (its close frame), read from `socket`. */
async function clientCloseCode(socket: Socket): Promise<number> {
  let got = Buffer.alloc(0);
  socket.resume();
  for await (const chunk of socket) {
    got = Buffer.concat([got, chunk as Buffer]);
    if (got.length >= 8) break;
  }
  expect(got[0]).toBe(0x88);
  return ((got[6]! ^ got[2]!) << 8) | (got[7]! ^ got[3]!);
}

/** Sends `bytes` from a raw server; resolves with the code of the client's close frame and its events. */
async function failWith(bytes: Buffer | Buffer[], init?: ConstructorParameters<typeof WebSocket>[1]) {
  let code!: Promise<number>;
  const url = await rawServer((s) => {
    for (const b of [bytes].flat()) s.write(b);
    code = clientCloseCode(s).catch(() => -1);
  });
  const ws = socket(url, init);
  const messages: unknown[] = [];
  ws.addEventListener('message', (e) => messages.push(e.data));
  const { error, close } = await ending(ws);
  expect(messages).toEqual([]);
  expect(error?.error).toBeInstanceOf(TypeError);
  expect([close.code, close.wasClean]).toEqual([1006, false]);
  return { code: await code, message: error!.message };
}

/** A binary message in `n` empty-payload frames but the first. */
function fragmented(n: number): Buffer {
  const parts = [frame(2, 'x', { fin: n === 1 })];
  const more = frame(0, Buffer.alloc(0), { fin: false });
  if (n > 2) parts.push(Buffer.concat(Array.from({ length: n - 2 }, () => more)));
  if (n > 1) parts.push(frame(0, Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A frame header declaring `len` payload bytes (none follow). */
function bigHeader(len: number): Buffer {
  const h = Buffer.alloc(10);
  h[0] = 0x82;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(len), 2);
  return h;
}

describe('WebSocket: message size and fragment limits', () => {
  it('a message declared over the default maxPayloadSize (128 MiB) closes with 1009 at its header', async () => {
    // undici's defaults, on every dispatcher.
    expect(new Agent().webSocketOptions).toMatchObject({ maxPayloadSize: 128 * 1024 * 1024, maxFragments: 131072 });
    const { code, message } = await failWith(bigHeader(128 * 1024 * 1024 + 1));
    expect(code).toBe(1009);
    expect(message).toMatch(/\(1009\).*exceeds maximum allowed size/);
  });

  it('maxPayloadSize from the dispatcher (undici\'s webSocket option) and from the socket\'s own options', async () => {
    const agent = new Agent({ webSocket: { maxPayloadSize: 1000 } });
    cleanup.push(() => agent.close());
    // Exactly undici's two keys; ferro's stalledWriteTimeout only when given.
    expect(agent.webSocketOptions).toStrictEqual({ maxPayloadSize: 1000, maxFragments: 131072 });
    const stalling = new Agent({ webSocket: { stalledWriteTimeout: 5 } });
    cleanup.push(() => stalling.close());
    expect(stalling.webSocketOptions).toStrictEqual({ maxPayloadSize: 128 * 1024 * 1024, maxFragments: 131072, stalledWriteTimeout: 5 });
    // Wrappers report the limits of what they wrap, as undici's do.
    expect(new RetryAgent(agent).webSocketOptions).toMatchObject({ maxPayloadSize: 1000 });
    expect(new MockAgent({ agent }).webSocketOptions).toMatchObject({ maxPayloadSize: 1000 });
    expect(agent.compose((d) => d).webSocketOptions).toMatchObject({ maxPayloadSize: 1000 });
    const twoParts = [frame(2, Buffer.alloc(600), { fin: false }), frame(0, Buffer.alloc(600))];
    expect((await failWith(twoParts, { dispatcher: agent })).code).toBe(1009);
    expect((await failWith(frame(2, Buffer.alloc(1001)), { maxPayloadSize: 1000 })).code).toBe(1009);
    // The socket's own option wins over the dispatcher's; 0 turns the limit off.
    const url = await rawServer((s) => s.write(frame(2, Buffer.alloc(5000))));
    const ws = socket(url, { dispatcher: agent, maxPayloadSize: 0 });
    const [event] = await once(ws, 'message');
    expect(((event as MessageEvent).data as Blob).size).toBe(5000);
  });

  it('a message in more than the default maxFragments (131,072) frames closes with 1008', async () => {
    // 200,000 fragments: what a server could otherwise keep going for ever.
    const { code, message } = await failWith(fragmented(200_000));
    expect(code).toBe(1008);
    expect(message).toMatch(/\(1008\).*fragments/);
  });

  it('maxFragments counts every frame of a message, and each message afresh', async () => {
    const url = await rawServer((s) => s.write(Buffer.concat([fragmented(3), fragmented(3)])));
    const ws = socket(url, { maxFragments: 3 });
    const got: unknown[] = [];
    ws.addEventListener('message', (e) => got.push(e.data));
    await new Promise<void>((r) => ws.addEventListener('message', () => got.length === 2 && r()));
    expect(got).toHaveLength(2);
    expect((await failWith(fragmented(4), { maxFragments: 3 })).code).toBe(1008);
  });

  it('WebSocketStream takes the same limits', async () => {
    let code!: Promise<number>;
    const url = await rawServer((s) => {
      s.write(fragmented(3));
      code = clientCloseCode(s).catch(() => -1);
    });
    const wss = new WebSocketStream(url, { maxFragments: 2 });
    const { readable } = await wss.opened;
    // undici's 'unclean close' WebSocketError; ferro keeps why as its cause.
    const failure = (await readable.getReader().read().catch((e: unknown) => e)) as Error;
    expect(failure.message).toBe('unclean close');
    expect((failure.cause as Error).message).toMatch(/\(1008\)/);
    await expect(wss.closed).rejects.toMatchObject({ closeCode: 1006 });
    expect(await code).toBe(1008);
  });

  it('every dispatcher taking options reports its webSocket option (undici\'s dispatcher-options test)', async () => {
    const webSocket = { maxFragments: 8, maxPayloadSize: 1024 };
    const made = [
      new BalancedPool([], { webSocket }),
      new EnvHttpProxyAgent({ httpProxy: '', httpsProxy: '', noProxy: '*', webSocket }),
      new ProxyAgent({ uri: 'http://localhost', webSocket }),
      new RoundRobinPool('http://localhost', { webSocket }),
      new Socks5ProxyAgent('socks5://localhost', { webSocket }),
    ];
    for (const d of made) {
      cleanup.push(() => d.close());
      expect([d.constructor.name, d.webSocketOptions]).toEqual([d.constructor.name, webSocket]);
    }
  });

  it('refuses bad limits with typed errors', () => {
    expect(() => new Agent({ webSocket: { maxFragments: -1 } })).toThrow(InvalidArgumentError);
    expect(() => new Agent({ webSocket: 'big' as never })).toThrow(InvalidArgumentError);
    expect(() => new WebSocket('ws://127.0.0.1:1/', { maxPayloadSize: Number.NaN })).toThrow(TypeError);
    expect(() => new WebSocketStream('ws://127.0.0.1:1/', { stalledWriteTimeout: -5 })).toThrow(TypeError);
  });
});
