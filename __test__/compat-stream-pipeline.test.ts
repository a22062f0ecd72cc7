// stream() and pipeline() stream semantics as undici's (issue 11, item 8).
import { afterEach, describe, expect, it } from 'vitest';
import { PassThrough, Writable } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Answers every request with `size` bytes, written 1 KiB at a time; `hold` leaves it unfinished. */
async function server(size: number, hold = false): Promise<Client> {
  const srv = cleanup.add(
    await httpServer((req, res) => {
      req.resume();
      const chunk = Buffer.alloc(1024, 'x');
      for (let sent = 0; sent < size; sent += chunk.length) res.write(chunk);
      if (!hold) res.end();
    }),
  );
  return cleanup.add(new Client(srv.origin));
}

describe('stream()', () => {
  it('never writes into the Writable while it needs drain', async () => {
    const client = await server(256 * 1024);
    let writesWhileFull = 0;
    let bytes = 0;
    const data = await client.stream({ path: '/', method: 'GET' }, () => {
      const w = new Writable({
        highWaterMark: 1024,
        write(chunk: Buffer, _e, done) {
          bytes += chunk.length;
          setImmediate(done);
        },
      });
      const write = w.write.bind(w);
      w.write = ((chunk: Buffer) => {
        if (w.writableNeedDrain) writesWhileFull++;
        return write(chunk);
      }) as typeof w.write;
      return w;
    });
    expect(data.trailers).toEqual({});
    expect(bytes).toBe(256 * 1024);
    expect(writesWhileFull).toBe(0);
  });

  it('a Writable destroyed mid-body without an error is a premature close, not success', async () => {
    const client = await server(1024, true);
    const err = await client
      .stream({ path: '/', method: 'GET' }, () => {
        const w: Writable = new Writable({
          write(_c, _e, done) {
            done();
            setImmediate(() => w.destroy());
          },
        });
        return w;
      })
      .then(
        () => null,
        (e: NodeJS.ErrnoException) => e,
      );
    expect(err?.code).toBe('ERR_STREAM_PREMATURE_CLOSE');
  });
});

describe('pipeline()', () => {
  it('destroying the response body without an error fails with RequestAbortedError', async () => {
    const client = await server(1024, true);
    const err = await new Promise<Error>((resolve) => {
      const duplex = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
        setImmediate(() => body.destroy());
        return body;
      });
      duplex.on('error', resolve);
      duplex.resume();
      duplex.end();
    });
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
  });

  it('writes after the response completed are discarded, not errors', async () => {
    const client = await server(1024);
    const duplex = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => body);
    const errs: Error[] = [];
    duplex.on('error', (e) => errs.push(e));
    duplex.resume();
    await new Promise((resolve) => duplex.on('end', resolve));
    await new Promise<void>((resolve) => duplex.write('late', () => resolve()));
    expect(errs).toEqual([]);
  });

  it("the handler's return value needs only `.on`", async () => {
    const client = await server(4096);
    const duplex = client.pipeline({ path: '/', method: 'GET' }, ({ body }) => {
      const through = new PassThrough();
      body.pipe(through);
      return { on: through.on.bind(through) } as unknown as PassThrough;
    });
    let bytes = 0;
    duplex.on('data', (c: Buffer) => (bytes += c.length));
    duplex.end();
    await new Promise((resolve, reject) => duplex.on('end', resolve).on('error', reject));
    expect(bytes).toBe(4096);
  });
});
