// Argument checks throw undici's class with undici's message, word for word (issue 35 item 6).
// Each row names the undici test that asserts the same message.
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Client, MockAgent, SnapshotAgent, errors, interceptors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

type Row = [name: string, call: () => unknown, cls: new (...a: never[]) => Error, message: string];

const LOCAL = new URL('http://localhost:200');

const rows: Row[] = [
  // test/interceptors/redirect.js, test/redirect-request.js
  ['redirect maxRedirections -1', () => interceptors.redirect({ maxRedirections: -1 }), errors.InvalidArgumentError, 'maxRedirections must be a positive number'],
  ['redirect maxRedirections 1.5', () => interceptors.redirect({ maxRedirections: 1.5 }), errors.InvalidArgumentError, 'maxRedirections must be a positive number'],
  // test/interceptors/cache.js
  ['cache origins not an array', () => interceptors.cache({ origins: 'http://example.com' as never }), TypeError, 'expected opts.origins to be an array or undefined, got string'],
  ['cache origins[0] a number', () => interceptors.cache({ origins: [123] as never }), TypeError, 'expected opts.origins[0] to be a string or RegExp, got number'],
  // lib/interceptor/cache.js and lib/util/cache.js (no undici test asserts these words)
  ['cache opts null', () => interceptors.cache(null as never), TypeError, 'expected type of opts to be an Object, got null'],
  ['cache methods not an array', () => interceptors.cache({ methods: 'GET' as never }), TypeError, 'expected type of opts.methods needs to be an array, got string'],
  ['cache methods empty', () => interceptors.cache({ methods: [] }), TypeError, 'opts.methods needs to have at least one method'],
  ['cache methods POST', () => interceptors.cache({ methods: ['POST' as never] }), TypeError, 'element of opts.methods-array needs to be one of following values: GET, HEAD, OPTIONS, TRACE, got POST'],
  ['cache cacheByDefault string', () => interceptors.cache({ cacheByDefault: '1' as never }), TypeError, 'expected opts.cacheByDefault to be number or undefined, got string'],
  ['cache type public', () => interceptors.cache({ type: 'public' as never }), TypeError, 'expected opts.type to be shared, private, or undefined, got string'],
  // test/mock-agent.js
  ['MockAgent enableCallHistory', () => new MockAgent({ enableCallHistory: 'hello' as never }), errors.InvalidArgumentError, 'options.enableCallHistory must to be a boolean'],
  // test/snapshot-testing.js
  ['SnapshotAgent mode', () => new SnapshotAgent({ mode: 'invalid' as never, snapshotPath: '/tmp/never-written.json' }), errors.InvalidArgumentError, 'Invalid snapshot mode: invalid. Must be one of: record, playback, update'],
  // test/node-test/client-errors.js 'invalid options throws' (its other rows already matched)
  ['Client maxHeaderSize 1.5', () => new Client(LOCAL, { maxHeaderSize: 1.5 }), errors.InvalidArgumentError, 'invalid maxHeaderSize'],
  ['Client keepAlive', () => new Client(LOCAL, { keepAlive: false } as never), errors.InvalidArgumentError, 'unsupported keepAlive, use pipelining=0 instead'],
  ['Client socketTimeout', () => new Client(LOCAL, { socketTimeout: 30e3 } as never), errors.InvalidArgumentError, 'unsupported socketTimeout, use headersTimeout & bodyTimeout instead'],
  ['Client requestTimeout', () => new Client(LOCAL, { requestTimeout: 30e3 } as never), errors.InvalidArgumentError, 'unsupported requestTimeout, use headersTimeout & bodyTimeout instead'],
  ['Client idleTimeout', () => new Client(LOCAL, { idleTimeout: 30e3 } as never), errors.InvalidArgumentError, 'unsupported idleTimeout, use keepAliveTimeout instead'],
  ['Client maxKeepAliveTimeout', () => new Client(LOCAL, { maxKeepAliveTimeout: 1e3 } as never), errors.InvalidArgumentError, 'unsupported maxKeepAliveTimeout, use keepAliveMaxTimeout instead'],
  ['Client localAddress 123', () => new Client(LOCAL, { localAddress: 123 as never }), errors.InvalidArgumentError, 'localAddress must be valid string IP address'],
  ['Client localAddress abcd123', () => new Client(LOCAL, { localAddress: 'abcd123' }), errors.InvalidArgumentError, 'localAddress must be valid string IP address'],
];

describe("argument checks: undici's class and message", () => {
  it.each(rows)('%s', (_name, call, cls, message) => {
    let thrown: unknown;
    try {
      const made = call() as { close?: () => unknown } | undefined;
      void made?.close?.();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(cls);
    expect((thrown as Error).message).toBe(message);
  });
});

// test/interceptors/redirect.js 'should throw on max redirects': the bare default message.
it("MaxRedirectsError carries undici's message 'max redirects'", async () => {
  const server = createServer((req, res) => {
    res.writeHead(302, { location: req.url === '/1' ? '/2' : '/3' }).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.defer(() => new Promise<void>((done) => server.close(() => done())));
  const agent = new Agent().compose(interceptors.redirect({ maxRedirections: 1, throwOnMaxRedirect: true }));
  cleanup.defer(() => agent.close());
  const { port } = server.address() as AddressInfo;
  const err = await agent.request({ origin: `http://127.0.0.1:${port}`, path: '/1', method: 'GET' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(errors.MaxRedirectsError);
  expect((err as Error).message).toBe('max redirects');
});

// test/interceptors/redirect.js 'should not allow invalid maxRedirections arguments': per request.
it("a request's bad maxRedirections fails with undici's words", async () => {
  const agent = new Agent().compose(interceptors.redirect());
  cleanup.defer(() => agent.close());
  const err = await Promise.resolve()
    .then(() => agent.request({ origin: 'http://localhost', path: '/', method: 'GET', maxRedirections: 'INVALID' as never }))
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(errors.InvalidArgumentError);
  expect((err as Error).message).toBe('maxRedirections must be a positive number');
});
