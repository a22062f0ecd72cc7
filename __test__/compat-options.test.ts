// Options undici users set (issue 11, item 7).
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Agent, Client, errors } from '../ts/index.js';
import type { Dispatcher } from '../ts/index.js';
import { Cleanup, ok, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('strictContentLength', () => {
  it('false: a body longer than its content-length is sent whole, with a warning', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.body))));
    const client = cleanup.add(new Client(srv.origin, { strictContentLength: false }));
    const warned = once(process, 'warning');
    const res = await client.request({ path: '/', method: 'POST', body: 'abcdef', headers: { 'content-length': '3' } });
    expect(await res.body.text()).toBe('abcdef');
    const [warning] = await warned;
    expect(warning).toBeInstanceOf(errors.RequestContentLengthMismatchError);
  });

  it('true (the default) refuses the mismatch', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok())));
    const client = cleanup.add(new Client(srv.origin));
    await expect(
      client.request({ path: '/', method: 'POST', body: 'abcdef', headers: { 'content-length': '3' } }),
    ).rejects.toBeInstanceOf(errors.RequestContentLengthMismatchError);
  });

  it('a content-length on GET without a body is left out, as undici does', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.headers['content-length'] ?? 'none'))));
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/', method: 'GET', headers: { 'content-length': '3' } });
    expect(await res.body.text()).toBe('none');
  });
});

describe('origins given as URL-like objects', () => {
  it('new Client({ protocol, hostname, port }) connects there', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok('hi'))));
    const client = cleanup.add(new Client({ protocol: 'http:', hostname: '127.0.0.1', port: srv.port }));
    expect(await (await client.request({ path: '/', method: 'GET' })).body.text()).toBe('hi');
  });

  it('an origin with a path is refused with undici\'s message', () => {
    expect(() => new Client('http://127.0.0.1/x')).toThrow(new errors.InvalidArgumentError('invalid url'));
    expect(() => new Client({ protocol: 'ftp:', hostname: 'x' })).toThrow(errors.InvalidArgumentError);
  });
});

describe('pipelining: 0', () => {
  it('turns keep-alive off: every request gets its own connection', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
    const client = cleanup.add(new Client(srv.origin, { pipelining: 0 }));
    for (const path of ['/a', '/b']) {
      expect(await (await client.request({ path, method: 'GET' })).body.text()).toBe(path);
    }
    expect(srv.requests.map((r) => r.conn.index)).toEqual([0, 1]);
  });
});

describe("responseHeaders: 'raw'", () => {
  it('gives the raw header list to the response and to onInfo', async () => {
    const srv = cleanup.add(
      await scriptServer((req) =>
        req.conn.socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' + ok('x', 'X-Two: 1\r\nX-Two: 2\r\n')),
      ),
    );
    const client = cleanup.add(new Client(srv.origin));
    const infos: unknown[] = [];
    const res = await client.request({
      path: '/',
      method: 'GET',
      responseHeaders: 'raw',
      onInfo: (info) => infos.push(info.headers),
    });
    await res.body.text();
    expect(res.headers).toEqual(['content-length', '1', 'X-Two', '1', 'X-Two', '2']);
    expect(infos).toEqual([['Link', '</a>']]);
  });
});

describe('Agent factory', () => {
  it('receives the origin as a string', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok('f'))));
    const seen: unknown[] = [];
    const agent = cleanup.add(
      new Agent({
        factory: (origin: unknown, opts: object): Dispatcher => {
          seen.push(origin);
          return new Client(origin as string, opts);
        },
      }),
    );
    await (await agent.request({ origin: srv.origin, path: '/', method: 'GET' })).body.text();
    expect(seen).toEqual([srv.origin]);
  });
});
