// DispatchOptions on the wire: origin, path, method, headers in every LibHeaders form, query,
// the header rules (each with its error, checked before anything is written), timeouts, options
// meant for interceptors, and aborts at every stage of a request.
import { afterEach, describe, expect, it } from 'vitest';
import { EventEmitter, once } from 'node:events';
import { Readable } from 'node:stream';
import { Agent, Client, errors } from '../ts/index.js';
import type { DispatchHandler, DispatchOptions } from '../ts/index.js';
import { Cleanup, ok, recorder, scriptServer, type RawRequest } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A server answering every request with its own request line, and the client on it. */
async function echoSetup(opts: ConstructorParameters<typeof Client>[1] = {}) {
  const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(`${req.method} ${req.path}`))));
  const client = cleanup.add(new Client(srv.origin, opts));
  return { srv, client };
}

/** Sends one request and returns what the server received. */
async function sent(client: Client, srv: { request(n: number): Promise<RawRequest>; requests: RawRequest[] }, opts: DispatchOptions) {
  const n = srv.requests.length;
  const res = await client.request(opts);
  await res.body.text();
  return srv.request(n);
}

/** Header lines of a raw head, in order, without the request line. */
const lines = (head: string): string[] => head.split('\r\n').slice(1, -2);

describe('origin, path and method', () => {
  it('an Agent takes the origin as a string or a URL', async () => {
    const { srv } = await echoSetup();
    const agent = cleanup.add(new Agent());
    const a = await agent.request({ origin: srv.origin, path: '/s', method: 'GET' });
    expect(await a.body.text()).toBe('GET /s');
    const b = await agent.request({ origin: new URL(srv.origin), path: '/u', method: 'GET' });
    expect(await b.body.text()).toBe('GET /u');
    expect(srv.conns).toHaveLength(1);
  });

  it('a Client takes its origin as a URL too, and sends path and method as given', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok('x'))));
    const client = cleanup.add(new Client(new URL(srv.origin)));
    const req = await sent(client, srv, { path: '/a/b?c=d&e=%20f', method: 'PURGE' });
    expect(req.head.split('\r\n')[0]).toBe('PURGE /a/b?c=d&e=%20f HTTP/1.1');
  });

  it('GET, HEAD and DELETE without a body carry no framing header; POST and PUT say content-length: 0', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(req.method === 'HEAD' ? 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n' : ok('x'))));
    const client = cleanup.add(new Client(srv.origin));
    for (const method of ['GET', 'HEAD', 'DELETE']) {
      const req = await sent(client, srv, { path: '/', method, body: null });
      expect(req.headers['content-length']).toBeUndefined();
      expect(req.headers['transfer-encoding']).toBeUndefined();
    }
    for (const method of ['POST', 'PUT']) {
      const req = await sent(client, srv, { path: '/', method });
      expect(req.headers['content-length']).toBe('0');
    }
  });

  it('a request head goes out exactly: host, connection, then the caller\'s headers, names and values as given (as undici sends them)', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, {
      path: '/',
      method: 'POST',
      headers: { 'X-Mixed-Case': 'Value With  Spaces', 'Content-Type': 'Text/Plain' },
      body: 'hi',
    });
    expect(req.head).toBe(
      `POST / HTTP/1.1\r\nhost: 127.0.0.1:${srv.port}\r\nconnection: keep-alive\r\nX-Mixed-Case: Value With  Spaces\r\n` +
        'Content-Type: Text/Plain\r\ncontent-length: 2\r\n\r\n',
    );
  });
});

describe('headers in every LibHeaders form', () => {
  const expected = ['host: HOST', 'connection: keep-alive', 'X-A: 1', 'x-b: two', 'x-list: p', 'x-list: q'];
  const check = async (headers: DispatchOptions['headers']) => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, { path: '/', method: 'GET', headers });
    expect(lines(req.head)).toEqual(expected.map((l) => l.replace('HOST', `127.0.0.1:${srv.port}`)));
  };

  it('an object, with numbers, arrays and undefined', () =>
    check({ 'X-A': 1, 'x-b': 'two', 'x-list': ['p', 'q'], 'x-skip': undefined }));
  it('a flat array of names and values', () => check(['X-A', '1', 'x-b', 'two', 'x-list', 'p', 'x-list', 'q']));
  it('a Map', () =>
    check(
      new Map<string, string | string[]>([
        ['X-A', '1'],
        ['x-b', 'two'],
        ['x-list', ['p', 'q']],
      ]),
    ));
  it('a Headers object', async () => {
    // Headers sorts and joins repeated names: the values arrive as Headers hands them over.
    const { srv, client } = await echoSetup();
    const h = new Headers([['X-B', 'two'], ['x-a', '1']]);
    const req = await sent(client, srv, { path: '/', method: 'GET', headers: h });
    expect(lines(req.head)).toEqual([`host: 127.0.0.1:${srv.port}`, 'connection: keep-alive', 'x-a: 1', 'x-b: two']);
  });
  it('a custom iterator of pairs', () =>
    check({
      *[Symbol.iterator]() {
        yield ['X-A', '1'];
        yield ['x-b', 'two'];
        yield ['x-list', ['p', 'q']];
        yield ['x-skip', undefined];
      },
    } as Iterable<[string, string | string[] | undefined]>));
  it('null', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, { path: '/', method: 'GET', headers: null });
    expect(lines(req.head)).toEqual([`host: 127.0.0.1:${srv.port}`, 'connection: keep-alive']);
  });

  it('a host header replaces the one derived from the origin', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, { path: '/', method: 'GET', headers: { Host: 'example.test:8080' } });
    expect(req.head.match(/^host:.*$/gim)).toEqual(['host: example.test:8080']);
  });
});

describe('query', () => {
  it('appends keys and values encoded with encodeURIComponent', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, {
      path: '/search',
      method: 'GET',
      query: { 'a b': 'c&d=e/f', n: 5, list: ['x', 'y'], 'é': '✓' },
    });
    expect(req.path).toBe(
      `/search?${encodeURIComponent('a b')}=${encodeURIComponent('c&d=e/f')}&n=5&list=x&list=y&${encodeURIComponent('é')}=${encodeURIComponent('✓')}`,
    );
  });

  it('refuses a query for a path that already has one (as undici does)', async () => {
    const { client } = await echoSetup();
    await expect(client.request({ path: '/p?keep=1', method: 'GET', query: { more: '2' } })).rejects.toThrow(
      new errors.InvalidArgumentError('Query params cannot be passed when url already contains "?" or "#".'),
    );
  });
});

describe('options meant for interceptors pass through untouched', () => {
  it('the dispatcher accepts them and leaves the options object as it was', async () => {
    const { srv, client } = await echoSetup();
    const dnsLookup = () => {};
    const opts: DispatchOptions = {
      path: '/',
      method: 'GET',
      maxRedirections: 3,
      dumpMaxSize: 10,
      abortOnDumped: true,
      waitForTrailers: false,
      dns: { affinity: 4, dualStack: false, lookup: dnsLookup },
      somethingElse: { deep: [1] },
    };
    const snapshot = { ...opts, dns: { ...(opts.dns as object) } };
    let seen: DispatchOptions | null = null;
    // Like a redirect interceptor, this one consumes maxRedirections: a Client refuses it.
    const composed = client.compose((dispatch) => (o, h) => {
      seen = o;
      const { maxRedirections: _consumed, ...rest } = o;
      return dispatch(rest as DispatchOptions, h);
    });
    const res = await composed.request(opts);
    expect(await res.body.text()).toBe('GET /');
    expect(seen).not.toBeNull();
    expect(seen!.maxRedirections).toBe(3);
    expect(seen!.dumpMaxSize).toBe(10);
    expect(opts).toEqual(snapshot);
    expect((opts.dns as { lookup: unknown }).lookup).toBe(dnsLookup);
    expect(srv.requests).toHaveLength(1);
  });
});

describe('header rules: each with its error, before anything is written', () => {
  const bad: [string, Partial<DispatchOptions>, new (...a: never[]) => Error, string?][] = [
    ['an odd-length header array', { headers: ['x-a', '1', 'x-b'] }, errors.InvalidArgumentError],
    ['transfer-encoding', { headers: { 'Transfer-Encoding': 'chunked' } }, errors.InvalidArgumentError],
    ['keep-alive', { headers: { 'keep-alive': 'timeout=5' } }, errors.InvalidArgumentError],
    ['upgrade', { headers: { upgrade: 'websocket' } }, errors.InvalidArgumentError],
    ['expect', { headers: { expect: '100-continue' } }, errors.NotSupportedError],
    ['a malformed connection token', { headers: { connection: 'keep-alive, bad token' } }, errors.InvalidArgumentError, 'invalid connection header'],
    ['an empty connection token', { headers: { connection: 'close,,x' } }, errors.InvalidArgumentError, 'invalid connection header'],
    ['duplicate host (object)', { headers: { host: 'a', Host: 'b' } }, errors.InvalidArgumentError],
    ['duplicate host (array)', { headers: ['host', 'a', 'host', 'b'] }, errors.InvalidArgumentError],
    ['host given as an array', { headers: { host: ['a', 'b'] } }, errors.InvalidArgumentError],
    ['duplicate content-length', { method: 'POST', body: 'x', headers: ['content-length', '1', 'Content-Length', '1'] }, errors.InvalidArgumentError],
    ['a content-length with non-digits', { method: 'POST', body: 'x', headers: { 'content-length': '1.0' } }, errors.InvalidArgumentError],
    ['a negative content-length', { method: 'POST', body: 'x', headers: { 'content-length': '-1' } }, errors.InvalidArgumentError],
    ['a content-length not matching the body', { method: 'POST', body: 'abcd', headers: { 'content-length': '3' } }, errors.RequestContentLengthMismatchError],
    ['CR LF in a header value', { headers: { 'x-a': 'v\r\nx-injected: 1' } }, errors.InvalidArgumentError],
    ['a lone LF in a header value', { headers: { 'x-a': 'v\nx-injected: 1' } }, errors.InvalidArgumentError],
    ['NUL in a header value', { headers: { 'x-a': 'v\0w' } }, errors.InvalidArgumentError],
    ['CR LF in a header name', { headers: { 'x-a\r\nx-injected': 'v' } }, errors.InvalidArgumentError],
    ['a space in a header name', { headers: { 'x a': 'v' } }, errors.InvalidArgumentError],
    ['NUL in a header name', { headers: [`x\0a`, 'v'] }, errors.InvalidArgumentError],
    ['CR LF in the path', { path: '/a\r\nx-injected: 1\r\n\r\nGET /b' }, errors.InvalidArgumentError],
    ['NUL in the path', { path: '/a\0b' }, errors.InvalidArgumentError],
    ['a space in the path', { path: '/a HTTP/1.1\r\n' }, errors.InvalidArgumentError],
    ['CR LF in the method', { method: 'GET / HTTP/1.1\r\nx: 1\r\n\r\nGET' }, errors.InvalidArgumentError],
    ['NUL in the method', { method: 'GE\0T' }, errors.InvalidArgumentError],
  ];

  for (const [name, opts, ErrorClass, message] of bad) {
    it(`${name} → ${ErrorClass.name}`, async () => {
      const { srv, client } = await echoSetup();
      const err = await client.request({ path: '/', method: 'GET', ...opts } as DispatchOptions).catch((e: Error) => e);
      expect(err).toBeInstanceOf(ErrorClass);
      if (message) expect((err as Error).message).toBe(message);
      // dispatch reports through the handler and writes nothing; it returns true (undici: the
      // request took no capacity, no 'drain' will follow).
      const [handler, rec] = recorder();
      expect(client.dispatch({ path: '/', method: 'GET', ...opts } as DispatchOptions, handler)).toBe(true);
      await rec.done;
      expect(rec.error).toBeInstanceOf(ErrorClass);
      // The only thing that ever reached the server is this good request, on the first connection.
      const res = await client.request({ path: '/good', method: 'GET' });
      expect(await res.body.text()).toBe('GET /good');
      expect(srv.conns).toHaveLength(1);
      expect(srv.requests.map((r) => r.path)).toEqual(['/good']);
      expect(srv.conns[0]!.partial()).toBe('');
    });
  }

  it('a valid connection header passes; close means reset', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, { path: '/', method: 'GET', headers: { connection: 'keep-alive, X-Custom' } });
    expect(req.headers.connection).toBe('keep-alive');
    const closing = await sent(client, srv, { path: '/', method: 'GET', headers: { connection: 'Close' } });
    expect(closing.headers.connection).toBe('close');
    await srv.conns[0]!.closed;
  });

  it('a content-length matching the body is sent once', async () => {
    const { srv, client } = await echoSetup();
    const req = await sent(client, srv, { path: '/', method: 'POST', body: 'abc', headers: { 'Content-Length': '3' } });
    expect(req.head.match(/^content-length:.*$/gim)).toEqual(['content-length: 3']);
    expect(req.body).toBe('abc');
  });
});

describe('timeouts', () => {
  it('headersTimeout fails a request whose head does not come, and drops the connection', async () => {
    const srv = cleanup.add(await scriptServer(() => {}));
    const client = cleanup.add(new Client(srv.origin, { headersTimeout: 100 }));
    const started = performance.now();
    await expect(client.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.HeadersTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    await srv.conns[0]!.closed;
  });

  it('a head that starts but does not finish in time is a headers timeout too', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write('HTTP/1.1 200 OK\r\nx-a: 1\r\n')));
    const client = cleanup.add(new Client(srv.origin));
    await expect(client.request({ path: '/', method: 'GET', headersTimeout: 100 })).rejects.toBeInstanceOf(
      errors.HeadersTimeoutError,
    );
  });

  it('bodyTimeout fails a body that stalls between chunks', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc')),
    );
    const client = cleanup.add(new Client(srv.origin, { bodyTimeout: 100 }));
    const res = await client.request({ path: '/', method: 'GET' });
    await expect(res.body.text()).rejects.toBeInstanceOf(errors.BodyTimeoutError);
    await srv.conns[0]!.closed;
  });

  it('bodyTimeout measures the gap between chunks, not the whole body', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        const s = req.conn.socket;
        s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
        let i = 0;
        // 10 chunks 50 ms apart: the whole body takes longer than bodyTimeout, no gap does.
        const timer = setInterval(() => {
          if (i++ < 10) s.write('1\r\nx\r\n');
          else {
            clearInterval(timer);
            s.write('0\r\n\r\n');
          }
        }, 50);
      }),
    );
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/', method: 'GET', bodyTimeout: 300 });
    expect(await res.body.text()).toBe('x'.repeat(10));
  });

  it('per-request values override the client; 0 disables', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => {
        if (req.path === '/slow') setTimeout(() => req.conn.socket.write(ok('late')), 250);
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { headersTimeout: 50, bodyTimeout: 50 }));
    const res = await client.request({ path: '/slow', method: 'GET', headersTimeout: 0 });
    expect(await res.body.text()).toBe('late');
    const strict = cleanup.add(new Client(srv.origin, { headersTimeout: 0 }));
    await expect(strict.request({ path: '/never', method: 'GET', headersTimeout: 80 })).rejects.toBeInstanceOf(
      errors.HeadersTimeoutError,
    );
  });

  it('the headers timeout does not run while the request body is still being sent', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(`got ${req.body}`))));
    const client = cleanup.add(new Client(srv.origin, { headersTimeout: 250 }));
    // Sending takes 600 ms, far beyond headersTimeout; the answer comes right after.
    const body = Readable.from(
      (async function* () {
        for (let i = 0; i < 4; i++) {
          yield 'ab';
          await new Promise((r) => setTimeout(r, 150));
        }
      })(),
    );
    const res = await client.request({ path: '/', method: 'POST', body, headers: { 'content-length': '8' } });
    expect(await res.body.text()).toBe('got abababab');
  });
});

describe('abort at every stage', () => {
  /** Signals of both kinds, with how to fire them. */
  const kinds: [string, () => { signal: AbortSignal | EventEmitter; fire(): void }][] = [
    ['AbortSignal', () => {
      const ac = new AbortController();
      return { signal: ac.signal, fire: () => ac.abort() };
    }],
    ['EventEmitter', () => {
      const ee = new EventEmitter();
      return { signal: ee, fire: () => ee.emit('abort') };
    }],
  ];

  for (const [kind, make] of kinds) {
    describe(kind, () => {
      it('while queued: never written', async () => {
        const srv = cleanup.add(await scriptServer((req) => req.path !== '/hold' && req.conn.socket.write(ok(req.path))));
        const client = cleanup.add(new Client(srv.origin));
        const hold = client.request({ path: '/hold', method: 'GET' });
        const { signal, fire } = make();
        const queued = client.request({ path: '/queued', method: 'GET', signal });
        await srv.request(0);
        fire();
        await expect(queued).rejects.toBeInstanceOf(errors.RequestAbortedError);
        srv.conns[0]!.socket.write(ok('held'));
        expect(await (await hold).body.text()).toBe('held');
        expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('/next');
        expect(srv.requests.map((r) => r.path)).toEqual(['/hold', '/next']);
        expect(srv.conns).toHaveLength(1);
      });

      it('while the body is being written: the body stream is destroyed and the connection dropped', async () => {
        const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write(ok(req.path))));
        const client = cleanup.add(new Client(srv.origin));
        const { signal, fire } = make();
        const body = new Readable({ read() {} });
        body.push('first part');
        const res = client.request({ path: '/upload', method: 'POST', body, signal });
        const conn = await srv.conn(0);
        await once(conn.socket, 'data');
        fire();
        await expect(res).rejects.toBeInstanceOf(errors.RequestAbortedError);
        await conn.closed;
        if (!body.destroyed) await once(body, 'close');
        expect(body.destroyed).toBe(true);
        expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('/next');
      });

      it('while waiting for headers: the connection is dropped, the next request gets a new one', async () => {
        const srv = cleanup.add(await scriptServer((req) => req.path !== '/wait' && req.conn.socket.write(ok(req.path))));
        const client = cleanup.add(new Client(srv.origin));
        const { signal, fire } = make();
        const res = client.request({ path: '/wait', method: 'GET', signal });
        await srv.request(0);
        fire();
        await expect(res).rejects.toBeInstanceOf(errors.RequestAbortedError);
        await srv.conns[0]!.closed;
        expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('/next');
        expect(srv.conns).toHaveLength(2);
      });

      it('mid-body: the body errors and the connection is dropped', async () => {
        const srv = cleanup.add(
          await scriptServer((req) => req.conn.socket.write(req.path === '/partial' ? 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nsome' : ok(req.path))),
        );
        const client = cleanup.add(new Client(srv.origin));
        const { signal, fire } = make();
        const res = await client.request({ path: '/partial', method: 'GET', signal });
        const text = res.body.text();
        fire();
        await expect(text).rejects.toBeInstanceOf(errors.RequestAbortedError);
        await srv.conns[0]!.closed;
        expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('/next');
      });

      it('after the response completed: nothing happens and the connection is kept', async () => {
        const { srv, client } = await echoSetup();
        const { signal, fire } = make();
        const res = await client.request({ path: '/done', method: 'GET', signal });
        expect(await res.body.text()).toBe('GET /done');
        fire();
        expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('GET /next');
        expect(srv.conns).toHaveLength(1);
      });
    });
  }

  it('destroying the response body aborts the request and drops the connection', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.write(req.path === '/partial' ? 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nsome' : ok(req.path))),
    );
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/partial', method: 'GET' });
    const errored = once(res.body, 'error').catch((e: unknown) => [e]);
    res.body.destroy();
    const [err] = (await errored) as [Error];
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    await srv.conns[0]!.closed;
    expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('/next');
  });

  it('controller.abort() in onRequestStart: nothing is written', async () => {
    const { srv, client } = await echoSetup();
    const reason = new Error('not today');
    const [handler, rec] = recorder({ onRequestStart: (c) => c.abort(reason) });
    client.dispatch({ path: '/never', method: 'GET' }, handler as DispatchHandler);
    await rec.done;
    expect(rec.error).toBe(reason);
    expect(await (await client.request({ path: '/next', method: 'GET' })).body.text()).toBe('GET /next');
    expect(srv.requests.map((r) => r.path)).toEqual(['/next']);
  });
});
