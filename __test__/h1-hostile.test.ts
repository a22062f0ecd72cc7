// Malformed, truncated, oversized and ambiguous responses from raw servers writing exact bytes:
// each fails its request with a typed error and destroys the connection — never a hang, never a
// crash, never a poisoned socket reused for the next request. Also the bodiless and 1xx framing.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Client, errors } from '../ts/index.js';
import { Cleanup, ok, recorder, scriptServer, type RawRequest } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

type Answer = string | ((req: RawRequest) => void);

/**
 * Answers the first request with `bad` and every later one with `fine`. Returns the error the
 * first request ended with (null if it succeeded), after proving the client dropped that
 * connection and served the next request on a new one.
 */
async function firstAnswer(bad: Answer, clientOpts: ConstructorParameters<typeof Client>[1] = {}): Promise<Error | null> {
  const srv = cleanup.add(
    await scriptServer((req) => {
      if (req.conn.index > 0 || req.n > 0) return void req.conn.socket.write(ok('fine'));
      if (typeof bad === 'string') req.conn.socket.write(bad, 'latin1');
      else bad(req);
    }),
  );
  const client = cleanup.add(new Client(srv.origin, clientOpts));
  const err = await client
    .request({ path: '/first', method: 'GET' })
    .then((r) => r.body.text())
    .then(
      () => null,
      (e: Error) => e,
    );
  // The server never closes these sockets itself (unless the script does): only the client can.
  await srv.conns[0]!.closed;
  const next = await client.request({ path: '/next', method: 'GET' });
  expect(await next.body.text()).toBe('fine');
  expect(srv.conns).toHaveLength(2);
  expect(srv.conns[0]!.requests.map((r) => r.path)).toEqual(['/first']);
  expect(srv.conns[1]!.requests.map((r) => r.path)).toEqual(['/next']);
  return err;
}

describe('ambiguous framing (request smuggling defences)', () => {
  const cases: [string, string][] = [
    ['Content-Length with Transfer-Encoding', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
    ['Transfer-Encoding with Content-Length', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
    ['conflicting Content-Length fields', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'],
    ['conflicting Content-Length list', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!'],
    ['non-numeric Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello'],
    ['signed Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello'],
    ['negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello'],
    ['hex Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello'],
    ['space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello'],
    ['obsolete line folding', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 5\r\n\r\nhello'],
    ['NUL in a header value', 'HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 5\r\n\r\nhello'],
  ];
  for (const [name, bytes] of cases) {
    it(`${name} → HTTPParserError`, async () => {
      const err = await firstAnswer(bytes);
      expect(err).toBeInstanceOf(errors.HTTPParserError);
    });
  }
});

describe('bad chunked encoding', () => {
  const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
  const cases: [string, string][] = [
    ['a non-hex chunk size', `${head}zz\r\nhello\r\n0\r\n\r\n`],
    ['a negative chunk size', `${head}-5\r\nhello\r\n0\r\n\r\n`],
    ['a chunk size beyond 64 bits', `${head}1ffffffffffffffff\r\nhello\r\n0\r\n\r\n`],
    ['a chunk size with a space inside', `${head}5 5\r\nhello\r\n0\r\n\r\n`],
    ['chunk data longer than its size', `${head}5\r\nhelloXX\r\n0\r\n\r\n`],
    ['an empty chunk size line', `${head}\r\nhello\r\n0\r\n\r\n`],
  ];
  for (const [name, bytes] of cases) {
    it(`${name} → HTTPParserError`, async () => {
      const err = await firstAnswer(bytes);
      expect(err).toBeInstanceOf(errors.HTTPParserError);
    });
  }
});

describe('bad status lines', () => {
  const cases: [string, string][] = [
    ['HTTP/2.0 on an HTTP/1.1 connection', 'HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['a foreign protocol', 'ICY 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['a two-digit status', 'HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n'],
    ['a four-digit status', 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n'],
    ['a status below 100', 'HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n'],
    ['plain garbage', 'this is not http at all\r\n\r\n'],
    ['a 101 nobody asked for', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n'],
  ];
  for (const [name, bytes] of cases) {
    it(`${name} → HTTPParserError`, async () => {
      const err = await firstAnswer(bytes);
      expect(err).toBeInstanceOf(errors.HTTPParserError);
    });
  }
});

describe('truncated responses', () => {
  const endWith = (bytes: string) => (req: RawRequest) => req.conn.socket.end(bytes, 'latin1');

  it('closed before any byte → SocketError', async () => {
    const err = await firstAnswer(endWith(''));
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('closed in the middle of the head → SocketError', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 200 OK\r\nContent-Len'));
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('closed after a 1xx, before the final head → SocketError', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 100 Continue\r\n\r\n'));
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('closed in the middle of a chunked body → SocketError on the body', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel'));
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('closed before the last chunk → SocketError', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'));
    expect(err).toBeInstanceOf(errors.SocketError);
  });

  it('a keep-alive response closed short of Content-Length → SocketError "other side closed"', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    expect(err).toMatchObject({ constructor: errors.SocketError, code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });

  it('a `connection: close` response closed short of Content-Length → ResponseContentLengthMismatchError', async () => {
    const err = await firstAnswer(endWith('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nabc'));
    expect(err).toBeInstanceOf(errors.ResponseContentLengthMismatchError);
  });
});

describe('oversized responses', () => {
  const bigHead = (n: number) => `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(n)}\r\nContent-Length: 2\r\n\r\nok`;

  it('a head over maxHeaderSize → HeadersOverflowError', async () => {
    const err = await firstAnswer(bigHead(2000), { maxHeaderSize: 1024 });
    expect(err).toBeInstanceOf(errors.HeadersOverflowError);
  });

  it('maxHeaderSize defaults to 16 KiB', async () => {
    // Just under the limit passes...
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(bigHead(16 * 1024 - 200))));
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('ok');
    // ...just over fails.
    expect(await firstAnswer(bigHead(16 * 1024 + 10))).toBeInstanceOf(errors.HeadersOverflowError);
  });

  it('a head that never ends fails once past the limit instead of buffering forever', async () => {
    const err = await firstAnswer(
      (req) => {
        const s = req.conn.socket;
        s.write('HTTP/1.1 200 OK\r\n');
        const more = (): void => {
          if (s.destroyed) return;
          s.write(`X-Filler: ${'f'.repeat(100)}\r\n`, () => setImmediate(more));
        };
        more();
      },
      { maxHeaderSize: 4096 },
    );
    expect(err).toBeInstanceOf(errors.HeadersOverflowError);
  });

  it('trailers over maxHeaderSize → HeadersOverflowError', async () => {
    const err = await firstAnswer(
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: ${'t'.repeat(3000)}\r\n\r\n`,
      { maxHeaderSize: 1024 },
    );
    expect(err).toBeInstanceOf(errors.HeadersOverflowError);
  });

  it('a Content-Length body over maxResponseSize → ResponseExceededMaxSizeError', async () => {
    const err = await firstAnswer(ok('x'.repeat(100)), { maxResponseSize: 10 });
    expect(err).toBeInstanceOf(errors.ResponseExceededMaxSizeError);
  });

  it('a chunked body over maxResponseSize → ResponseExceededMaxSizeError; at the limit is fine', async () => {
    const chunked = (body: string) =>
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const err = await firstAnswer(chunked('y'.repeat(11)), { maxResponseSize: 10 });
    expect(err).toBeInstanceOf(errors.ResponseExceededMaxSizeError);
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(chunked('y'.repeat(10)))));
    const client = cleanup.add(new Client(srv.origin, { maxResponseSize: 10 }));
    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('y'.repeat(10));
  });
});

describe('bytes nobody asked for', () => {
  it('a second response glued to the first is never taken as the next answer', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.conn.index === 0) req.conn.socket.write(ok('real') + ok('smuggled'));
        else req.conn.socket.write(ok('fine'));
      }),
    );
    const client = cleanup.add(new Client(srv.origin));
    const first = await client.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('real');
    const second = await client.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('fine');
    expect(srv.conns).toHaveLength(2);
    await srv.conns[0]!.closed;
  });

  it('bytes arriving on an idle connection make the client drop it', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.conn.index > 0) return void req.conn.socket.write(ok('fine'));
        req.conn.socket.write(ok('real'));
      }),
    );
    const client = cleanup.add(new Client(srv.origin));
    const first = await client.request({ path: '/1', method: 'GET' });
    expect(await first.body.text()).toBe('real');
    const disconnected = once(client, 'disconnect');
    srv.conns[0]!.socket.write(ok('smuggled'));
    await disconnected;
    await srv.conns[0]!.closed;
    const second = await client.request({ path: '/2', method: 'GET' });
    expect(await second.body.text()).toBe('fine');
    expect(srv.conns).toHaveLength(2);
  });
});

describe('bodiless responses and 1xx', () => {
  it('HEAD, 204 and 304 have no body whatever their headers say, and the connection carries on', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n',
      'HTTP/1.1 204 No Content\r\n\r\n',
      'HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\nETag: "x"\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ok('last'),
    ];
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(answers[req.n]!)));
    const client = cleanup.add(new Client(srv.origin));
    const head = await client.request({ path: '/', method: 'HEAD' });
    expect(head.headers['content-length']).toBe('5');
    expect(await head.body.text()).toBe('');
    const none = await client.request({ path: '/', method: 'GET' });
    expect(none.statusCode).toBe(204);
    expect(await none.body.text()).toBe('');
    const notModified = await client.request({ path: '/', method: 'GET' });
    expect(notModified.statusCode).toBe(304);
    expect(await notModified.body.text()).toBe('');
    const emptyChunked = await client.request({ path: '/', method: 'GET' });
    expect(await emptyChunked.body.text()).toBe('');
    const last = await client.request({ path: '/', method: 'GET' });
    expect(await last.body.text()).toBe('last');
    expect(srv.conns).toHaveLength(1);
  });

  it('1xx heads reach onResponseStart each time, then the final one; request() gives them to onInfo', async () => {
    const srv = cleanup.add(
      await scriptServer((req) =>
        req.conn.socket.write(
          'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n' + ok('final'),
        ),
      ),
    );
    const client = cleanup.add(new Client(srv.origin));
    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 100', 'head 103', 'head 200', 'end']);
    expect(rec.text()).toBe('final');

    const infos: unknown[] = [];
    const res = await client.request({
      path: '/',
      method: 'GET',
      onInfo: (info) => infos.push(info),
    });
    expect(await res.body.text()).toBe('final');
    expect(infos).toEqual([
      { statusCode: 100, headers: {} },
      { statusCode: 103, headers: { link: '</a.css>' } },
    ]);
    expect(srv.conns).toHaveLength(1);
  });
});
