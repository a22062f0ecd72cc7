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

describe('body.text() alongside other readers', () => {
  it("leaves other 'data' listeners fed", async () => {
    const client = await server(8 * 1024);
    const { body } = await client.request({ path: '/', method: 'GET' });
    let seen = 0;
    body.on('data', (c: Buffer) => (seen += c.length));
    const text = await body.text();
    expect(text.length).toBe(8 * 1024);
    expect(seen).toBe(8 * 1024);
    expect(body.bodyUsed).toBe(true);
  });

  it('keeps multi-byte characters whole after setEncoding', async () => {
    // '€' is three bytes; the server splits one across two writes.
    const euro = Buffer.from('€');
    const srv = cleanup.add(
      await httpServer((req, res) => {
        req.resume();
        res.write(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]));
        setTimeout(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('b')])), 20);
      }),
    );
    const client = cleanup.add(new Client(srv.origin));
    const { body } = await client.request({ path: '/', method: 'GET' });
    body.setEncoding('utf8');
    // Let the first write arrive and sit in the decoder before text() is called.
    await new Promise((resolve) => body.once('readable', resolve));
    expect(await body.text()).toBe('a€b');
  });
});
