// HTTP/3 flow control both ways, against the Rust test server (crates/h3-test-server): a dispatch
// handler that pauses holds its stream (the server's send stalls at the window) and gets every byte
// in order once it resumes; request bodies streamed from a slow source, and larger than the
// server's stream window while the server reads slowly, arrive whole.
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { Client, type Dispatcher } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function h3Client() {
  const server = cleanup.add(await h3Server());
  const client = cleanup.add(new Client(server.origin, { connect: { ca }, allowH3: true, h3Options: { priorKnowledge: true } }));
  return { server, client };
}

/** byte i of the server's /big body. */
function pattern(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}
// Large enough that what the engine reads before a pause lands (several MiB on a loaded machine,
// where JS is late to handle the head) still leaves the server well short of the end.
const BIG = 16 << 20;

/** Bytes of /big the server has handed to QUIC so far (its /stats, on the same connection). */
async function bigSent(client: Client): Promise<number> {
  const res = await client.request({ path: '/stats', method: 'GET' });
  return ((await res.body.json()) as { bigSent: number }).bigSent;
}

/** Polls /stats until the server's /big send stops moving (flow control holds it), or it ends. */
async function sendSettles(client: Client): Promise<number> {
  let last = -1;
  for (;;) {
    const now = await bigSent(client);
    if (now === last || now === BIG) return now;
    last = now;
  }
}

interface Received {
  chunks: Buffer[];
  done: Promise<void>;
}

/**
 * Dispatches GET /big?BIG, the handler pausing in onResponseStart (`start`) or after every
 * `everyBytes` bytes; each pause hands `onPause` the function that resumes it.
 */
function dispatchBig(client: Client, pauseAt: { start?: boolean; everyBytes?: number }, onPause: (resume: () => void) => void): Received {
  const received: Received = { chunks: [], done: Promise.resolve() };
  let paused = false;
  let sinceResume = 0;
  const pause = (ctl: Dispatcher.DispatchController): void => {
    paused = true;
    ctl.pause();
    onPause(() => {
      paused = false;
      sinceResume = 0;
      ctl.resume();
    });
  };
  received.done = new Promise<void>((resolve, reject) => {
    client.dispatch(
      { path: `/big?${BIG}`, method: 'GET' },
      {
        onRequestStart() {},
        onResponseStart(ctl) {
          if (pauseAt.start) pause(ctl);
        },
        onResponseData(ctl, chunk) {
          received.chunks.push(Buffer.from(chunk));
          sinceResume += chunk.length;
          if (pauseAt.everyBytes !== undefined && !paused && sinceResume >= pauseAt.everyBytes) pause(ctl);
        },
        onResponseEnd: () => resolve(),
        onResponseError: (_c, err) => reject(err),
      },
    );
  });
  return received;
}

describe('HTTP/3 response flow control (pause / resume)', () => {
  it('a handler paused in onResponseStart holds the server at its window, then gets every byte in order', async () => {
    const { client } = await h3Client();
    let resume: (() => void) | null = null;
    const got = dispatchBig(client, { start: true }, (r) => (resume = r));
    while (resume === null) await new Promise((r) => setImmediate(r));
    // Paused: the server's send stops well short of the body (the stream window is 1 MiB). What
    // the engine had read before the pause landed may still arrive (README, "dispatch"), then
    // nothing more while paused.
    const held = await sendSettles(client);
    expect(held).toBeLessThan(BIG / 2);
    const atHold = got.chunks.length;
    expect(await sendSettles(client)).toBe(held);
    expect(got.chunks.length).toBe(atHold);
    (resume as () => void)();
    await got.done;
    expect(Buffer.concat(got.chunks).equals(pattern(BIG))).toBe(true);
    expect(await bigSent(client)).toBe(BIG);
  });

  it('a handler pausing in onResponseData every 512 KiB and resuming later gets every byte in order', async () => {
    const { client } = await h3Client();
    let pauses = 0;
    const got = dispatchBig(client, { everyBytes: 512 * 1024 }, (resume) => {
      pauses++;
      setTimeout(resume, 5);
    });
    await got.done;
    expect(pauses).toBeGreaterThanOrEqual(8);
    expect(Buffer.concat(got.chunks).equals(pattern(BIG))).toBe(true);
  });
});

describe('HTTP/3 request bodies under flow control', () => {
  it('a body streamed from a slow Readable arrives byte-exact', async () => {
    const { client } = await h3Client();
    const data = pattern(1 << 20);
    let offset = 0;
    // 64 chunks of 16 KiB, each produced a timer tick after the stream asks for it.
    const source = new Readable({
      read() {
        setTimeout(() => {
          const chunk = data.subarray(offset, offset + 16 * 1024);
          offset += chunk.length;
          this.push(chunk.length > 0 ? chunk : null);
        }, 1);
      },
    });
    const res = await client.request({ path: '/body', method: 'POST', body: source });
    expect(res.statusCode).toBe(200);
    const echoed = Buffer.from(await res.body.arrayBuffer());
    expect(echoed.length).toBe(data.length);
    expect(echoed.equals(data)).toBe(true);
  });

  it('a body larger than the stream window, to a server that reads slowly, completes', async () => {
    const { client } = await h3Client();
    // 4 MiB against the server's 1.25 MB stream window, read 256 KiB at a time with 20 ms between.
    const size = 4 << 20;
    const data = pattern(size);
    const chunks = Array.from({ length: 64 }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
    const res = await client.request({ path: '/slow-read?20', method: 'PUT', body: Readable.from(chunks) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe(String(size));
  });
});
