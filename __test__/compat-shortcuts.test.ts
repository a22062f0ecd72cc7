// Top-level shortcuts accept every form undici's do: a string, a URL, or a URL-like object that
// also carries the operation's options (issue 11, item 1).
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { Agent, errors } from '../ts/index.js';
import type { Dispatcher } from '../ts/index.js';
import { connect, pipeline, request, stream, upgrade } from '../ts/api/shortcuts.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Answers with what it received: method, url, selected headers and the body, as JSON. */
async function echo(): Promise<{ origin: string; dispatcher: Dispatcher }> {
  const srv = cleanup.add(
    await httpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
      });
    }),
  );
  return { origin: srv.origin, dispatcher: cleanup.add(new Agent()) };
}

describe('request({ origin, path, ... }) — the URL object is the options too', () => {
  it('carries headers, method, body and options (the exact input of the issue)', async () => {
    const { origin, dispatcher } = await echo();
    const res = await request({ origin, path: '/obj?x=1', headers: { 'x-test': 'yes' }, dispatcher });
    const seen = (await res.body.json()) as { method: string; url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/obj?x=1');
    expect(seen.method).toBe('GET');
    expect(seen.headers['x-test']).toBe('yes');

    const posted = await request({
      origin,
      path: '/p',
      method: 'POST',
      body: 'hello',
      reset: true,
      opaque: 'op',
      headers: ['x-a', '1'],
      dispatcher,
    });
    const seen2 = (await posted.body.json()) as { method: string; body: string; headers: Record<string, string> };
    expect(seen2).toMatchObject({ method: 'POST', body: 'hello' });
    expect(seen2.headers['x-a']).toBe('1');
    expect(seen2.headers.connection).toBe('close');
    expect(posted.opaque).toBe('op');
  });

  it('a body without a method defaults to PUT; a callback may follow the url directly', async () => {
    const { origin, dispatcher } = await echo();
    const seen = await new Promise<{ method: string }>((resolve, reject) =>
      request({ origin, path: '/cb', body: 'x', dispatcher }, (err, data) =>
        err ? reject(err) : void data.body.json().then((j) => resolve(j as { method: string })),
      ),
    );
    expect(seen.method).toBe('PUT');
  });

  it('stream(urlObject, factory) runs with the object as options', async () => {
    const { origin, dispatcher } = await echo();
    let out = '';
    const data = await stream({ origin, path: '/s', method: 'DELETE', opaque: 7, dispatcher }, () =>
      new Writable({
        write(chunk: Buffer, _e, done) {
          out += chunk;
          done();
        },
      }),
    );
    expect(data.opaque).toBe(7);
    expect(JSON.parse(out)).toMatchObject({ method: 'DELETE', url: '/s' });
  });

  it('pipeline(urlObject, handler) runs with the object as options', async () => {
    const { origin, dispatcher } = await echo();
    const duplex = pipeline({ origin, path: '/pl', method: 'POST', dispatcher }, ({ body }) => body);
    let out = '';
    duplex.on('data', (c: Buffer) => (out += c));
    duplex.end('up');
    await new Promise((resolve, reject) => duplex.on('end', resolve).on('error', reject));
    expect(JSON.parse(out)).toMatchObject({ method: 'POST', url: '/pl', body: 'up' });
  });

  it('a legacy url object (protocol / hostname / port / pathname / search) is joined', async () => {
    const { origin, dispatcher } = await echo();
    const u = new URL(origin);
    const res = await request(
      { protocol: 'http:', hostname: u.hostname, port: u.port, pathname: 'no-slash', search: '?q=2' },
      { dispatcher },
    );
    expect(((await res.body.json()) as { url: string }).url).toBe('/no-slash?q=2');
  });
});

describe('shortcut argument checks, with undici classes and messages', () => {
  const bad: [string, () => unknown, new (...a: never[]) => Error, string][] = [
    ['no url', () => request(null as never), errors.InvalidArgumentError, 'invalid url'],
    ['a number', () => request(42 as never), errors.InvalidArgumentError, 'invalid url'],
    ['a string that is no URL', () => request('not a url'), TypeError, 'Invalid URL'],
    [
      'ftp',
      () => request('ftp://example.com/'),
      errors.InvalidArgumentError,
      'Invalid URL protocol: the URL must start with `http:` or `https:`.',
    ],
    [
      'object without http protocol',
      () => request({ origin: 'ftp://x', path: '/' }),
      errors.InvalidArgumentError,
      'Invalid URL protocol: the URL must start with `http:` or `https:`.',
    ],
    [
      'bad port',
      () => request({ protocol: 'http:', hostname: 'x', port: 'abc' }),
      errors.InvalidArgumentError,
      'Invalid URL: port must be a valid integer or a string representation of an integer.',
    ],
    [
      'non-string path in the object',
      () => request({ origin: 'http://x', path: 5 as never }),
      errors.InvalidArgumentError,
      'Invalid URL path: the path must be a string or null/undefined.',
    ],
    ['opts not an object', () => request('http://x/', 'o' as never), errors.InvalidArgumentError, 'invalid opts'],
    ['opts.path not a string', () => request('http://x/', { path: 5 as never }), errors.InvalidArgumentError, 'invalid opts.path'],
    [
      'opts.path with a url that has a path',
      () => request('http://x/a', { path: '/b' }),
      errors.InvalidArgumentError,
      'invalid url',
    ],
    [
      'opts.agent',
      () => request('http://x/', { agent: {} } as never),
      errors.InvalidArgumentError,
      'unsupported opts.agent. Did you mean opts.client?',
    ],
    ['stream with a bad url', () => stream(7 as never, () => new Writable()), errors.InvalidArgumentError, 'invalid url'],
    ['connect with a bad url', () => connect('ftp://x/'), errors.InvalidArgumentError, 'Invalid URL protocol: the URL must start with `http:` or `https:`.'],
    ['upgrade with a bad url', () => upgrade(false as never), errors.InvalidArgumentError, 'invalid url'],
  ];
  for (const [what, call, cls, message] of bad) {
    it(`${what} throws synchronously`, () => {
      let thrown: unknown;
      try {
        call();
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(cls);
      expect((thrown as Error).message).toBe(message);
    });
  }
});
