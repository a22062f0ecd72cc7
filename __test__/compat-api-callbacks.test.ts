// pipeline(), stream(), connect(), upgrade() and request() callbacks report as undici does (issue
// 35 item 16): a stream destroyed without an error, a factory Writable closed early, a legacy
// Writable's needDrain, the `{ opaque }` handed to connect / upgrade error callbacks, a client
// destroyed from inside a response callback, and the chunks onBodySent is given.
import { afterEach, describe, expect, it } from 'vitest';
import { EventEmitter, once } from 'node:events';
import { PassThrough, Readable, Writable, pipeline as streamPipeline } from 'node:stream';
import { Client, Pool, errors } from '../ts/index.js';
import { httpServer, rawServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A server writing 'asd' and holding the response open; `responses` are the live ones. */
async function holdingServer() {
  const responses: import('node:http').ServerResponse[] = [];
  const s = cleanup.add(
    await httpServer((req, res) => {
      req.resume();
      res.write('asd');
      responses.push(res);
    }),
  );
  return { client: cleanup.add(new Client(s.origin)), responses };
}

function errorOf(stream: NodeJS.EventEmitter): Promise<Error> {
  return once(stream, 'error').then(([err]) => err as Error);
}

describe('pipeline(): destroyed without an error is an abort', () => {
  it('the handler destroys the response body: RequestAbortedError', async () => {
    const { client } = await holdingServer();
    const dup = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      setImmediate(() => body.destroy());
      return body;
    });
    dup.end();
    expect(await errorOf(dup)).toBeInstanceOf(errors.RequestAbortedError);
  });

  it('the returned stream closes without ending (node pipeline into a destroyed PassThrough): UND_ERR_ABORTED', async () => {
    const { client } = await holdingServer();
    const dup = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      const pt = new PassThrough();
      setImmediate(() => pt.destroy());
      return streamPipeline(body, pt, () => {});
    });
    dup.end();
    expect((await errorOf(dup) as { code?: string }).code).toBe('UND_ERR_ABORTED');
  });

  it('a piped PassThrough destroyed without an error: the response body and the pipeline get RequestAbortedError', async () => {
    const { client } = await holdingServer();
    let bodyError: Promise<Error> | null = null;
    const dup = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      const pt = new PassThrough();
      bodyError = errorOf(body);
      setImmediate(() => pt.destroy());
      body.pipe(pt);
      return pt;
    });
    dup.end();
    expect(await errorOf(dup)).toBeInstanceOf(errors.RequestAbortedError);
    expect(await bodyError!).toBeInstanceOf(errors.RequestAbortedError);
  });

  it('a piped PassThrough destroyed with an error passes that error to both', async () => {
    const { client } = await holdingServer();
    let bodyError: Promise<Error> | null = null;
    const dup = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      const pt = new PassThrough();
      bodyError = errorOf(body);
      setImmediate(() => pt.destroy(new Error('asd')));
      body.pipe(pt);
      return pt;
    });
    dup.end();
    expect((await errorOf(dup)).message).toBe('asd');
    expect((await bodyError!).message).toBe('asd');
  });

  it('the Duplex destroyed from inside the handler, which then throws: RequestAbortedError and close', async () => {
    const s = cleanup.add(await httpServer((req, res) => req.pipe(res)));
    const client = cleanup.add(new Client(s.origin));
    const dup = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      dup.destroy();
      body.on('error', () => {});
      throw new Error('asd');
    });
    dup.end();
    const closed = new Promise((resolve) => dup.on('close', resolve));
    expect(await errorOf(dup)).toBeInstanceOf(errors.RequestAbortedError);
    await closed;
  });
});

describe('stream(): the factory Writable', () => {
  it('destroyed without an error before the response ended: ERR_STREAM_PREMATURE_CLOSE', async () => {
    const s = cleanup.add(
      await httpServer((_req, res) => {
        res.write('hello');
        setImmediate(() => res.end(' world'));
      }),
    );
    const client = cleanup.add(new Client(s.origin));
    const err = await client
      .stream({ path: '/', method: 'GET' }, () => {
        const pt = new PassThrough();
        pt.on('data', () => pt.destroy());
        return pt;
      })
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ERR_STREAM_PREMATURE_CLOSE');
  });

  it('a legacy Writable (no writableNeedDrain) that needs drain is not written to until it drains', async () => {
    const s = cleanup.add(await httpServer((_req, res) => res.end(Buffer.alloc(4096))));
    const client = cleanup.add(new Client(s.origin));
    const dst = new PassThrough();
    dst.pause();
    Object.defineProperty(dst, 'writableNeedDrain', { get: () => undefined });
    while (dst.write(Buffer.alloc(4096))) {
      /* fill it */
    }
    const realWrite = dst.write.bind(dst);
    let early = 0;
    dst.write = ((...args: Parameters<Writable['write']>) => (early++, realWrite(...args))) as Writable['write'];
    const done = client.stream({ path: '/', method: 'GET' }, () => {
      expect((dst as unknown as { _writableState: { needDrain: boolean } })._writableState.needDrain).toBe(true);
      setImmediate(() => {
        dst.write = realWrite as Writable['write'];
        dst.resume();
      });
      return dst;
    });
    await done;
    expect(early).toBe(0);
  });
});

describe('connect() / upgrade(): error callbacks get { opaque }', () => {
  it('connect aborted by its signal', async () => {
    const s = cleanup.add(await rawServer(() => {}));
    const client = cleanup.add(new Client(s.origin));
    const signal = new EventEmitter();
    const result = new Promise<[Error | null, unknown]>((resolve) =>
      client.connect({ path: '/', signal, opaque: 'asd' }, (err, data) => resolve([err, data])),
    );
    signal.emit('abort');
    const [err, data] = await result;
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect(data).toEqual({ opaque: 'asd' });
  });

  it('upgrade aborted by its signal (listener removed)', async () => {
    const s = cleanup.add(await rawServer(() => {}));
    const client = cleanup.add(new Client(s.origin));
    const signal = new EventEmitter();
    const result = new Promise<[Error | null, unknown]>((resolve) =>
      client.upgrade({ path: '/', signal, opaque: 'asd' }, (err, data) => resolve([err, data])),
    );
    expect(signal.listenerCount('abort')).toBe(1);
    signal.emit('abort');
    const [err, data] = await result;
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect(data).toEqual({ opaque: 'asd' });
    expect(signal.listenerCount('abort')).toBe(0);
  });

  it('upgrade with an invalid signal', async () => {
    const s = cleanup.add(await rawServer(() => {}));
    const client = cleanup.add(new Client(s.origin));
    const [err, data] = await new Promise<[Error | null, unknown]>((resolve) =>
      client.upgrade({ path: '/', signal: 'error' as never, opaque: 'asd' }, (e, d) => resolve([e, d])),
    );
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
    expect(data).toEqual({ opaque: 'asd' });
  });

  it('connect refused by the server (a non-2xx answer)', async () => {
    const s = cleanup.add(await httpServer((_req, res) => res.writeHead(403).end()));
    s.server.on('connect', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n'));
    const client = cleanup.add(new Client(s.origin));
    const [err, data] = await new Promise<[Error | null, unknown]>((resolve) =>
      client.connect({ path: '/', opaque: 7 }, (e, d) => resolve([e, d])),
    );
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(data).toEqual({ opaque: 7 });
  });
});

describe('request(): the client destroyed from inside the response callback', () => {
  it('fails the body with the given error even though its end had arrived', async () => {
    const s = cleanup.add(await httpServer((_req, res) => res.end('whole')));
    const client = new Client(s.origin);
    const boom = new Error('boom');
    const outcome = await new Promise<unknown>((resolve) => {
      client.request({ path: '/', method: 'GET' }, (err, data) => {
        if (err) return resolve(err);
        data.body.resume().on('error', resolve).on('end', () => resolve('ended'));
        void client.destroy(boom);
      });
    });
    expect(outcome).toBe(boom);
  });
});

describe('onBodySent: the chunks as the caller gave them', () => {
  const chunks = ['he', 'llo', 'world', '🚀'];
  for (const [kind, body] of [
    ['a Readable of strings', () => Readable.from(chunks)],
    ['an array of strings', () => chunks],
    ['an async iterable of strings', () => (async function* () { yield* chunks; })()],
  ] as const) {
    it(kind, async () => {
      const s = cleanup.add(await httpServer((req, res) => req.resume().on('end', () => res.end('ad'))));
      const pool = cleanup.add(new Pool(s.origin));
      const sent: unknown[] = [];
      await new Promise<void>((resolve, reject) =>
        pool.dispatch(
          { path: '/', method: 'POST', body: body() as never },
          {
            onRequestStart() {},
            onBodySent: (chunk) => void sent.push(chunk),
            onResponseStart() {},
            onResponseData() {},
            onResponseEnd: () => resolve(),
            onResponseError: (_c, err) => reject(err),
          },
        ),
      );
      expect(sent).toEqual(chunks);
    });
  }
});
