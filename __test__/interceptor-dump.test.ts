// interceptors.dump against real local servers: the body is discarded up to maxSize and the
// connection reused; past it the connection is closed (the server sees it), or with
// abortOnDumped the response still ends normally.
import { describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, Client, errors, interceptors } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

/** A server that also reports its connections, so tests can see reuse and closing. */
async function server(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const s = track(await httpServer(handler));
  const sockets: Socket[] = [];
  s.server.on('connection', (socket: Socket) => {
    sockets.push(socket);
    // The client closing mid-body is what these tests expect.
    socket.on('error', () => {});
  });
  return Object.assign(s, { sockets });
}

const sized = (size: number, chunked = false) => (_q: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'x-kept': 'yes', ...(chunked ? {} : { 'content-length': String(size) }) });
  res.end(Buffer.alloc(size, 'a'));
};

/** Resolves when the server side of a connection has closed ('error' before it is expected). */
const closed = (socket: Socket): Promise<void> =>
  new Promise((resolve) => (socket.destroyed ? resolve() : socket.on('close', () => resolve())));

/** A body that never ends: chunks as fast as the client reads, until the connection closes. */
const endless = (contentLength?: number) => (_q: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, contentLength === undefined ? {} : { 'content-length': String(contentLength) });
  const chunk = Buffer.alloc(16 * 1024, 'e');
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
};

function agent(opts?: Parameters<typeof interceptors.dump>[0]) {
  return track(new Agent().compose(interceptors.dump(opts)));
}

describe('dump', () => {
  it('discards the body, keeps status and headers, and reuses the connection', async () => {
    const s = await server(sized(5000));
    const a = agent({ maxSize: 8000 });
    for (let i = 0; i < 2; i++) {
      const res = await a.request({ origin: s.origin, path: '/', method: 'GET' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-kept']).toBe('yes');
      expect(res.headers['content-length']).toBe('5000');
      expect((await res.body.arrayBuffer()).byteLength).toBe(0);
    }
    expect(s.sockets).toHaveLength(1);
  });

  it('a body past maxSize fails with RequestAbortedError and closes the connection', async () => {
    const s = await server(endless());
    const err = await agent({ maxSize: 1000 })
      .request({ origin: s.origin, path: '/', method: 'GET' })
      .then((res) => res.body.text())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect((err as Error).message).toMatch(/larger than maxSize \(1000\)/);
    await closed(s.sockets[0]!);
    expect(s.sockets[0]!.destroyed).toBe(true);
  });

  it('a declared Content-Length past maxSize fails before the body is read', async () => {
    const s = await server(endless(1 << 30));
    const err = await agent({ maxSize: 1024 })
      .request({ origin: s.origin, path: '/', method: 'GET' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect((err as Error).message).toBe(`Response size (${1 << 30}) larger than maxSize (1024)`);
    await closed(s.sockets[0]!);
  });

  it('the default maxSize is 1 MiB', async () => {
    const s = await server((req, res) => sized(req.url === '/big' ? 1024 * 1024 + 1 : 1024 * 1024)(req, res));
    const a = agent();
    await (await a.request({ origin: s.origin, path: '/ok', method: 'GET' })).body.dump();
    await expect(a.request({ origin: s.origin, path: '/big', method: 'GET' })).rejects.toBeInstanceOf(errors.RequestAbortedError);
  });

  it('dumpMaxSize per request overrides the interceptor', async () => {
    const s = await server(sized(2000));
    const a = agent({ maxSize: 100 });
    const res = await a.request({ origin: s.origin, path: '/', method: 'GET', dumpMaxSize: 4000 });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await expect(a.request({ origin: s.origin, path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.RequestAbortedError);
  });

  it('abortOnDumped: past maxSize the connection closes but the response ends normally', async () => {
    const s = await server(endless());
    const res = await agent({ maxSize: 1000, abortOnDumped: true }).request({ origin: s.origin, path: '/', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('');
    await closed(s.sockets[0]!);
    expect(s.sockets[0]!.destroyed).toBe(true);
  });

  it('waitForTrailers reads on to the trailers of a response that announces them', async () => {
    const s = await server((_q, res) => {
      res.writeHead(200, { trailer: 'x-sum' });
      res.write(Buffer.alloc(5000, 'b'));
      res.addTrailers({ 'x-sum': 'abc' });
      res.end();
    });
    const res = await agent({ maxSize: 100, abortOnDumped: true }).request({
      origin: s.origin,
      path: '/',
      method: 'GET',
      waitForTrailers: true,
    });
    await res.body.dump();
    expect(res.trailers).toEqual({ 'x-sum': 'abc' });
  });

  it("the caller's abort after the head waits for the dump, so the connection is reused", async () => {
    let finish: () => void = () => {};
    const s = await server((req, res) => {
      if (req.url === '/second') return res.end('again');
      res.writeHead(200, { 'content-length': '2000' });
      res.write(Buffer.alloc(1000, 'x'));
      finish = () => res.end(Buffer.alloc(1000, 'y'));
    });
    // One connection: the second request waits for it instead of racing its release.
    const a = track(new Client(s.origin).compose(interceptors.dump({ maxSize: 4000 })));
    const ac = new AbortController();
    const res = await a.request({ origin: s.origin, path: '/first', method: 'GET', signal: ac.signal });
    const failed = res.body.text().catch((e: unknown) => e);
    ac.abort();
    finish();
    expect(await failed).toBeInstanceOf(errors.RequestAbortedError);
    const again = await a.request({ origin: s.origin, path: '/second', method: 'GET' });
    expect(again.statusCode).toBe(200);
    await again.body.dump();
    expect(s.sockets).toHaveLength(1);
  });

  it('bad options throw InvalidArgumentError when the interceptor is made', () => {
    for (const opts of [{ maxSize: -1 }, { maxSize: 'big' }, { abortOnDumped: 1 }, { waitForTrailers: 'y' }, 'opts']) {
      expect(() => interceptors.dump(opts as never), JSON.stringify(opts)).toThrow(errors.InvalidArgumentError);
    }
  });
});
