// interceptors.retry and RetryAgent against real local servers: statuses, socket errors,
// Retry-After, backoff, methods, resuming a cut body with Range / If-Match, giving up.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { Agent, errors, interceptors, RetryAgent, type RetryOptions } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

afterEach(() => {
  vi.useRealTimers();
});

/** A server answering the n-th request (0-based) with `answers[n]` (the last one repeats). */
async function server(answers: ((req: IncomingMessage, res: ServerResponse, body: string) => void)[]) {
  const seen: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const s = await httpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const n = seen.length;
      seen.push({ method: req.method!, headers: req.headers, body });
      answers[Math.min(n, answers.length - 1)]!(req, res, body);
    });
  });
  return Object.assign(track(s), { seen });
}

const status = (code: number, headers: Record<string, string> = {}) => (_q: IncomingMessage, res: ServerResponse) => {
  res.writeHead(code, headers);
  res.end(`status ${code}`);
};
const ok = (_q: IncomingMessage, res: ServerResponse, body: string) => res.end(`ok ${body}`);
const hangUp = (_q: IncomingMessage, res: ServerResponse) => res.socket!.destroy();

const fast: RetryOptions = { minTimeout: 1, maxTimeout: 5 };

function agent(opts: RetryOptions = fast) {
  return track(new Agent().compose(interceptors.retry(opts)));
}

/** With setTimeout and Date faked: waits for the retry timer, runs it, returns its delay. */
async function nextRetryDelay(): Promise<number> {
  while (vi.getTimerCount() === 0) await new Promise((r) => setImmediate(r));
  const before = Date.now();
  vi.advanceTimersToNextTimer();
  return Date.now() - before;
}

function fakeClock(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
}

describe('retry: when', () => {
  it('retries a retryable status, then delivers the success', async () => {
    const s = await server([status(503), status(502), ok]);
    const res = await agent().request({ origin: s.origin, path: '/', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok ');
    expect(s.seen).toHaveLength(3);
  });

  it('retries after a socket error before the response', async () => {
    const s = await server([hangUp, ok]);
    const res = await agent().request({ origin: s.origin, path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('ok ');
    expect(s.seen).toHaveLength(2);
  });

  it('does not retry a status outside statusCodes', async () => {
    const s = await server([status(404), ok]);
    const res = await agent().request({ origin: s.origin, path: '/', method: 'GET' });
    expect(res.statusCode).toBe(404);
    expect(await res.body.text()).toBe('status 404');
    expect(s.seen).toHaveLength(1);
  });

  it('does not retry POST by default (not idempotent)', async () => {
    const s = await server([status(503), ok]);
    const err = await agent()
      .request({ origin: s.origin, path: '/', method: 'POST', body: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect((err as InstanceType<typeof errors.RequestRetryError>).statusCode).toBe(503);
    expect(s.seen).toHaveLength(1);
  });

  it('does not retry POST after a socket error either', async () => {
    const s = await server([hangUp, ok]);
    const err = await agent()
      .request({ origin: s.origin, path: '/', method: 'POST', body: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(s.seen).toHaveLength(1);
  });

  it('retries POST when methods lists it, re-sending its body', async () => {
    const s = await server([status(503), ok]);
    const res = await agent({ ...fast, methods: ['POST'] }).request({ origin: s.origin, path: '/', method: 'POST', body: 'data' });
    expect(await res.body.text()).toBe('ok data');
    expect(s.seen.map((r) => r.body)).toEqual(['data', 'data']);
  });

  it('a body factory is called again for each attempt; a read stream is not retried', async () => {
    const s = await server([status(503), ok]);
    const a = agent({ ...fast, methods: ['PUT'] });
    const res = await a.request({ origin: s.origin, path: '/', method: 'PUT', body: () => Readable.from(['fresh']) });
    expect(await res.body.text()).toBe('ok fresh');
    const s2 = await server([status(503), ok]);
    const err = await a
      .request({ origin: s2.origin, path: '/', method: 'PUT', body: Readable.from(['once']) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect(s2.seen).toHaveLength(1);
  });

  it('gives up after maxRetries with the last error (status)', async () => {
    const s = await server([status(503)]);
    const err = await agent({ ...fast, maxRetries: 2 })
      .request({ origin: s.origin, path: '/', method: 'GET' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect((err as InstanceType<typeof errors.RequestRetryError>).code).toBe('UND_ERR_REQ_RETRY');
    expect((err as InstanceType<typeof errors.RequestRetryError>).statusCode).toBe(503);
    expect(s.seen).toHaveLength(3);
  });

  it('gives up after maxRetries with the last error (socket)', async () => {
    const s = await server([hangUp]);
    const err = await agent({ ...fast, maxRetries: 1 })
      .request({ origin: s.origin, path: '/', method: 'GET' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(s.seen).toHaveLength(2);
  });

  it('throwOnError: false delivers the last retryable response as a response', async () => {
    const s = await server([status(503, { 'x-n': 'last' })]);
    const res = await agent({ ...fast, maxRetries: 1, throwOnError: false }).request({ origin: s.origin, path: '/', method: 'GET' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['x-n']).toBe('last');
    expect(await res.body.text()).toBe('status 503');
    expect(s.seen).toHaveLength(2);
  });

  it('per-request retryOptions override the interceptor', async () => {
    const s = await server([status(503)]);
    const err = await agent({ ...fast, maxRetries: 5 })
      .request({ origin: s.origin, path: '/', method: 'GET', retryOptions: { maxRetries: 0 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect(s.seen).toHaveLength(1);
  });

  it('a custom retry function decides, and sees the attempt counter', async () => {
    const s = await server([status(500), status(500), ok]);
    const counters: number[] = [];
    const res = await agent({
      retry: (err, { state, opts }, cb) => {
        counters.push(state.counter);
        expect(opts.method).toBe('GET');
        expect((err as InstanceType<typeof errors.RequestRetryError>).statusCode).toBe(500);
        cb(null);
      },
    }).request({ origin: s.origin, path: '/', method: 'GET' });
    await res.body.dump();
    expect(counters).toEqual([1, 2]);
  });
});

describe('retry: waiting', () => {
  it('backoff grows by timeoutFactor and is capped at maxTimeout', async () => {
    fakeClock();
    const s = await server([status(503), status(503), status(503), status(503), ok]);
    const pending = agent({ minTimeout: 100, timeoutFactor: 3, maxTimeout: 1000 }).request({ origin: s.origin, path: '/', method: 'GET' });
    const delays = [await nextRetryDelay(), await nextRetryDelay(), await nextRetryDelay(), await nextRetryDelay()];
    expect(delays).toEqual([100, 300, 900, 1000]);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it('honours Retry-After in seconds (capped by maxTimeout)', async () => {
    fakeClock();
    const s = await server([status(429, { 'retry-after': '7' }), status(503, { 'retry-after': '99' }), ok]);
    const pending = agent({ minTimeout: 1, maxTimeout: 20_000 }).request({ origin: s.origin, path: '/', method: 'GET' });
    expect(await nextRetryDelay()).toBe(7000);
    expect(await nextRetryDelay()).toBe(20_000);
    await (await pending).body.dump();
  });

  it('honours Retry-After as an HTTP date; retryAfter: false ignores it', async () => {
    fakeClock();
    const later = () => new Date(Date.now() + 3000).toUTCString();
    const s = await server([(q, res) => status(503, { 'retry-after': later() })(q, res), ok]);
    const pending = agent({ minTimeout: 1, maxTimeout: 60_000 }).request({ origin: s.origin, path: '/', method: 'GET' });
    expect(await nextRetryDelay()).toBe(3000);
    await (await pending).body.dump();

    const s2 = await server([status(503, { 'retry-after': '30' }), ok]);
    const p2 = agent({ minTimeout: 5, retryAfter: false }).request({ origin: s2.origin, path: '/', method: 'GET' });
    expect(await nextRetryDelay()).toBe(5);
    await (await p2).body.dump();
  });

  it('an abort during the backoff ends the request at once', async () => {
    fakeClock();
    const s = await server([status(503), ok]);
    const ac = new AbortController();
    const pending = agent({ minTimeout: 60_000 })
      .request({ origin: s.origin, path: '/', method: 'GET', signal: ac.signal })
      .catch((e: unknown) => e);
    while (vi.getTimerCount() === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect(vi.getTimerCount()).toBe(0);
    expect(s.seen).toHaveLength(1);
  });
});

describe('retry: resuming a cut body', () => {
  const payload = randomBytes(200_000);
  const cut = 70_000;

  /** First answer: the head and `cut` bytes, then the connection drops. */
  const firstPart =
    (etag: string | null) =>
    (_q: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'content-length': String(payload.length), ...(etag ? { etag } : {}) });
      res.write(payload.subarray(0, cut), () => res.socket!.destroy());
    };

  /** Later answers: honour Range (206), as a resuming server does. */
  const rest =
    (etag: string | null) =>
    (req: IncomingMessage, res: ServerResponse): void => {
      const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (!m) return void res.writeHead(200, { 'content-length': String(payload.length) }).end(payload);
      const start = Number(m[1]);
      const end = m[2] ? Number(m[2]) : payload.length - 1;
      res.writeHead(206, {
        'content-range': `bytes ${start}-${end}/${payload.length}`,
        'content-length': String(end - start + 1),
        ...(etag ? { etag } : {}),
      });
      res.end(payload.subarray(start, end + 1));
    };

  it('resumes with Range and If-Match; the caller gets the body byte for byte', async () => {
    const s = await server([firstPart('"v1"'), rest('"v1"')]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    expect(res.statusCode).toBe(200);
    const got = Buffer.from(await res.body.arrayBuffer());
    expect(got.length).toBe(payload.length);
    expect(got.equals(payload)).toBe(true);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1]!.headers['if-match']).toBe('"v1"');
    expect(s.seen[1]!.headers.range).toMatch(/^bytes=\d+-199999$/);
    expect(Number(/bytes=(\d+)/.exec(s.seen[1]!.headers.range!)![1])).toBeGreaterThan(0);
  });

  it('a slow consumer (stream() with backpressure) still gets the resumed body whole', async () => {
    const s = await server([firstPart('"v1"'), rest('"v1"')]);
    const chunks: Buffer[] = [];
    const sink = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        setImmediate(cb);
      },
    });
    await agent().stream({ origin: s.origin, path: '/file', method: 'GET' }, () => sink);
    expect(Buffer.concat(chunks).equals(payload)).toBe(true);
    expect(s.seen).toHaveLength(2);
  });

  it('a body cut before its first byte is fetched again whole, without Range', async () => {
    const headOnly = (_q: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'content-length': String(payload.length) });
      res.flushHeaders();
      res.socket!.write('', () => res.socket!.destroy());
    };
    const s = await server([headOnly, rest(null)]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    expect(Buffer.from(await res.body.arrayBuffer()).equals(payload)).toBe(true);
    expect(s.seen[1]!.headers.range).toBeUndefined();
  });

  it('resumes without If-Match when the ETag is weak or absent', async () => {
    const s = await server([firstPart('W/"weak"'), rest('W/"weak"')]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    expect(Buffer.from(await res.body.arrayBuffer()).equals(payload)).toBe(true);
    expect(s.seen[1]!.headers['if-match']).toBeUndefined();
    expect(s.seen[1]!.headers.range).toBeDefined();
  });

  it('fails clearly when the server answers the Range request with a full 200', async () => {
    const s = await server([firstPart('"v1"'), (_q, res) => res.writeHead(200, { etag: '"v1"' }).end(payload)]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    const err = await res.body.arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect((err as Error).message).toBe('server does not support the range header and the payload was partially consumed');
  });

  it('fails clearly when the resource changed (ETag mismatch)', async () => {
    const s = await server([firstPart('"v1"'), rest('"v2"')]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    const err = await res.body.arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect((err as Error).message).toBe('ETag mismatch');
  });

  it('a first 206 whose content-length disagrees with its content-range fails without a retry', async () => {
    const s = await server([
      (_q, res) => {
        res.writeHead(206, { 'content-range': 'bytes 0-99/300', 'content-length': '300' });
        res.end('1'.repeat(99));
        res.socket!.destroy();
      },
      ok,
    ]);
    const err = await agent()
      .request({ origin: s.origin, path: '/file', method: 'GET', headers: { range: 'bytes=0-99' } })
      .then((r) => r.body.text())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestRetryError);
    expect(err).toMatchObject({ code: 'UND_ERR_REQ_RETRY', message: 'Content-Length mismatch', statusCode: 206 });
    expect(s.seen).toHaveLength(1);
  });

  it('a resumed 206 longer than its content-range fails the body (no foreign bytes appended)', async () => {
    const s = await server([firstPart('"v1"'), (req, res) => {
      const start = Number(/^bytes=(\d+)-/.exec(req.headers.range ?? '')![1]);
      // Without writeHead, node:http computes the content-length of what end() is given.
      res.statusCode = 206;
      res.setHeader('etag', '"v1"');
      res.setHeader('content-range', `bytes ${start}-${payload.length - 1}/${payload.length}`);
      res.end(Buffer.concat([payload.subarray(start), Buffer.from('HTTP/1.1 200 OK injected')]));
    }]);
    const res = await agent().request({ origin: s.origin, path: '/file', method: 'GET' });
    const err = await res.body.arrayBuffer().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UND_ERR_REQ_RETRY', message: 'Content-Length mismatch' });
  });
});

describe('retry: options and RetryAgent', () => {
  it('bad options throw InvalidArgumentError when the interceptor is made', () => {
    const bad: unknown[] = [
      { maxRetries: -1 },
      { maxRetries: 1.5 },
      { minTimeout: -5 },
      { maxTimeout: 'x' },
      { timeoutFactor: 0.5 },
      { retryAfter: 1 },
      { methods: 'GET' },
      { statusCodes: ['503'] },
      { errorCodes: [1] },
      { retry: 'yes' },
      'opts',
    ];
    for (const opts of bad) {
      expect(() => interceptors.retry(opts as never), JSON.stringify(opts)).toThrow(errors.InvalidArgumentError);
    }
    expect(() => new RetryAgent(new Agent(), { maxRetries: -1 })).toThrow(errors.InvalidArgumentError);
  });

  it('RetryAgent retries through the agent it wraps', async () => {
    const s = await server([status(500), ok]);
    const retryAgent = track(new RetryAgent(new Agent(), fast));
    const res = await retryAgent.request({ origin: s.origin, path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('ok ');
    expect(s.seen).toHaveLength(2);
  });
});
