// Request body forms undici users pass (issue 11, item 6): FormData, Blob / File, ArrayBuffer,
// every typed array, DataView, URLSearchParams; a chunk of a bad type fails with a TypeError.
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

interface Seen {
  type?: string;
  length?: string;
  body: string;
}

async function echo(): Promise<(body: unknown, headers?: Record<string, string>) => Promise<Seen>> {
  const srv = cleanup.add(
    await httpServer((req, res) => {
      let body = '';
      req.setEncoding('latin1');
      req.on('data', (c: string) => (body += c));
      req.on('end', () =>
        res.end(JSON.stringify({ type: req.headers['content-type'], length: req.headers['content-length'], body })),
      );
    }),
  );
  const client = cleanup.add(new Client(srv.origin));
  return async (body, headers) =>
    (await (await client.request({ path: '/', method: 'POST', body: body as never, headers })).body.json()) as Seen;
}

describe('byte forms', () => {
  it('ArrayBuffer, typed arrays and DataView send the bytes they cover', async () => {
    const send = await echo();
    const bytes = new TextEncoder().encode('xxhello');
    expect(await send(bytes.buffer.slice(2))).toEqual({ length: '5', body: 'hello' });
    expect(await send(new Uint16Array([0x6968]))).toEqual({ length: '2', body: 'hi' });
    expect(await send(new DataView(bytes.buffer, 2, 3))).toEqual({ length: '3', body: 'hel' });
    expect(await send(new Float64Array(1))).toEqual({ length: '8', body: '\0'.repeat(8) });
    expect(await send(new Uint8Array(bytes.buffer, 2, 2))).toEqual({ length: '2', body: 'he' });
  });
});

describe('forms with a content type', () => {
  it('URLSearchParams is sent urlencoded', async () => {
    const send = await echo();
    expect(await send(new URLSearchParams({ a: '1', b: 'x y' }))).toEqual({
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
      length: '9',
      body: 'a=1&b=x+y',
    });
  });

  it('a Blob or File is sent with its size and type; a caller content-type wins', async () => {
    const send = await echo();
    expect(await send(new Blob(['blob!'], { type: 'text/x' }))).toEqual({ type: 'text/x', length: '5', body: 'blob!' });
    expect(await send(new File(['file'], 'n.txt'))).toEqual({ length: '4', body: 'file' });
    expect(await send(new Blob(['b'], { type: 'text/x' }), { 'content-type': 'mine' })).toEqual({
      type: 'mine',
      length: '1',
      body: 'b',
    });
  });

  it('FormData is sent as multipart with the boundary its content-type names', async () => {
    const send = await echo();
    const fd = new FormData();
    fd.append('a', '1');
    fd.append('f', new Blob(['xyz'], { type: 'text/plain' }), 'f.txt');
    const seen = await send(fd);
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(seen.type ?? '')?.[1];
    expect(boundary).toBeTruthy();
    expect(seen.body).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\nxyz\r\n` +
        `--${boundary}--\r\n`,
    );
  });
});

describe('bad chunks', () => {
  for (const [what, chunks] of [
    ['a number', [1]],
    ['an object', [{}]],
    ['null', ['a', null]],
  ] as const) {
    it(`${what} in an iterable body fails the request with a TypeError`, async () => {
      const send = await echo();
      const err = await send(chunks).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect((err as NodeJS.ErrnoException).code).toBe('ERR_INVALID_ARG_TYPE');
    });
  }
});
