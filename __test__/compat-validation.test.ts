// Argument validation at the call, with undici's classes and messages (issue 11, item 5).
import { afterEach, describe, expect, it } from 'vitest';
import { Readable, Writable } from 'node:stream';
import { Agent, Client, errors } from '../ts/index.js';
import type { DispatchHandler, DispatchOptions } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Answers with the request line's target and the raw request headers but host and connection. */
async function echo(): Promise<Client> {
  const srv = cleanup.add(
    await httpServer((req, res) => {
      const headers: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        if (!/^(host|connection)$/i.test(name)) headers.push(name, req.rawHeaders[i + 1]!);
      }
      res.end(JSON.stringify({ url: req.url, headers }));
    }),
  );
  return cleanup.add(new Client(srv.origin));
}

const quiet: DispatchHandler = {
  onRequestStart() {},
  onResponseStart() {},
  onResponseData() {},
  onResponseEnd() {},
  onResponseError() {},
};

/** The error dispatch reports for `opts`, through onResponseError. */
function dispatchError(client: Client, opts: Partial<DispatchOptions>): Promise<Error | null> {
  return new Promise((resolve) => {
    client.dispatch({ path: '/', method: 'GET', ...opts } as DispatchOptions, {
      ...quiet,
      onResponseEnd: () => resolve(null),
      onResponseError: (_c, err) => resolve(err),
    });
  });
}

describe('dispatch handler checks', () => {
  it('a handler lacking required hooks throws instead of hanging', async () => {
    const client = await echo();
    expect(() => client.dispatch({ path: '/', method: 'GET' }, {} as DispatchHandler)).toThrow(
      new errors.InvalidArgumentError('invalid onRequestStart method'),
    );
    const { onResponseEnd: _e, ...noEnd } = quiet;
    expect(() => client.dispatch({ path: '/', method: 'GET' }, { ...noEnd, onResponseError: undefined })).toThrow(
      'invalid onResponseError method',
    );
    const err = await new Promise<Error>((resolve) =>
      client.dispatch({ path: '/', method: 'GET' }, { ...noEnd, onResponseError: (_c, e) => resolve(e) }),
    );
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
    expect(err.message).toBe('invalid onResponseEnd method');
    const up = await new Promise<Error>((resolve) =>
      client.dispatch({ path: '/', method: 'GET', upgrade: 'websocket' }, { ...quiet, onResponseError: (_c, e) => resolve(e) }),
    );
    expect(up.message).toBe('invalid onRequestUpgrade method');
  });
});

describe('request option checks', () => {
  const cases: [string, Partial<DispatchOptions>, string][] = [
    ['reset', { reset: 'yes' as never }, 'invalid reset'],
    ['expectContinue', { expectContinue: 1 as never }, 'invalid expectContinue'],
    ['maxRedirections', { maxRedirections: 2 }, 'maxRedirections is not supported, use the redirect interceptor'],
    ['throwOnError', { throwOnError: true }, 'invalid throwOnError'],
    ['headersTimeout as a string', { headersTimeout: '5' as never }, 'invalid headersTimeout'],
    ['negative bodyTimeout', { bodyTimeout: -1 }, 'invalid bodyTimeout'],
    ['query with ? in path', { path: '/?a=1', query: { b: 2 } }, 'Query params cannot be passed when url already contains "?" or "#".'],
    ['query with # in path', { path: '/#x', query: { b: 2 } }, 'Query params cannot be passed when url already contains "?" or "#".'],
  ];
  for (const [what, opts, message] of cases) {
    it(`${what} → InvalidArgumentError "${message}"`, async () => {
      const client = await echo();
      const err = await dispatchError(client, opts);
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
      expect(err!.message).toBe(message);
    });
  }

  it('maxRedirections: 0 is allowed', async () => {
    const client = await echo();
    expect(await dispatchError(client, { maxRedirections: 0 })).toBeNull();
  });
});

describe('null and undefined inside headers and query', () => {
  it('null header values are sent empty, undefined ones left out', async () => {
    const client = await echo();
    const get = async (headers: DispatchOptions['headers']) =>
      ((await (await client.request({ path: '/', method: 'GET', headers })).body.json()) as { headers: string[] }).headers;
    expect(await get(['a', null as never])).toEqual(['a', '']);
    expect(await get(['a', undefined as never])).toEqual([]);
    expect(await get({ a: ['x', null as never] })).toEqual(['a', 'x', 'a', '']);
    expect(await get({ a: null as never })).toEqual(['a', '']);
  });

  it('null, undefined and non-primitive query values are sent empty', async () => {
    const client = await echo();
    const url = async (query: Record<string, unknown>) =>
      ((await (await client.request({ path: '/', method: 'GET', query })).body.json()) as { url: string }).url;
    expect(await url({ a: null })).toBe('/?a=');
    expect(await url({ a: undefined })).toBe('/?a=');
    expect(await url({ a: [null, 1] })).toBe('/?a=&a=1');
    expect(await url({ a: { b: 1 }, c: true, d: 'x y' })).toBe('/?a=&c=true&d=x%20y');
  });
});

describe('API call checks', () => {
  it('request checks the options before the callback; a bad callback destroys the body', async () => {
    const client = await echo();
    expect(() => client.request(null as never, 5 as never)).toThrow(new errors.InvalidArgumentError('invalid opts'));
    const body = new Readable({ read() {} });
    expect(() => client.request({ path: '/', method: 'POST', body }, 5 as never)).toThrow(
      new errors.InvalidArgumentError('invalid callback'),
    );
    expect(body.destroyed).toBe(true);
  });

  it('stream checks options, then the callback, then the factory', async () => {
    const client = await echo();
    expect(() => client.stream(null as never, () => new Writable(), 5 as never)).toThrow('invalid opts');
    expect(() => client.stream({ path: '/', method: 'GET' }, () => new Writable(), 5 as never)).toThrow('invalid callback');
    await expect(client.stream({ path: '/', method: 'GET' }, 5 as never)).rejects.toThrow('invalid factory');
  });

  it('connect and upgrade check the options before the callback, and the signal', async () => {
    const client = await echo();
    expect(() => client.connect(null as never, 5 as never)).toThrow('invalid opts');
    expect(() => client.upgrade({ path: '/' }, 5 as never)).toThrow('invalid callback');
    for (const call of [() => client.upgrade({ path: '/', signal: 5 as never }), () => client.connect({ path: '/', signal: 5 as never })]) {
      const err = await call().then(() => null, (e: Error) => e);
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
      expect(err!.message).toBe('signal must be an EventEmitter or EventTarget');
    }
  });

  it('Agent refuses a connect option that is neither a function nor an object', () => {
    for (const connect of [5, 'x']) {
      expect(() => new Agent({ connect } as never)).toThrow(new errors.InvalidArgumentError('connect must be a function or an object'));
    }
  });
});
