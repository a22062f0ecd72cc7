// MockInterceptor and MockScope: every reply form, default headers and trailers, content-length,
// delay / persist / times, and the argument errors with their messages.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Readable } from 'node:stream';
import { errors } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { MockInterceptor, MockScope, type Interceptable } from '../ts/mock/mock-interceptor.js';

const ORIGIN = 'http://localhost:3000';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanup.length) await cleanup.pop()!();
});

function setup(): { agent: MockAgent; pool: Interceptable } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  cleanup.push(() => agent.close());
  return { agent, pool: agent.get(ORIGIN) };
}

interface Got {
  status: number;
  statusText: string;
  headers: Record<string, unknown>;
  text: string;
  trailers: Record<string, string>;
}

async function call(agent: MockAgent, path: string, init: { method?: string; body?: string | Readable; headers?: Record<string, string> } = {}): Promise<Got> {
  const res = await agent.request({ origin: ORIGIN, path, method: init.method ?? 'GET', body: init.body, headers: init.headers });
  const text = await res.body.text();
  return { status: res.statusCode, statusText: res.statusText, headers: res.headers as Record<string, unknown>, text, trailers: res.trailers };
}

describe('reply(statusCode, data, options)', () => {
  it('sends a string with its status text', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/s' }).reply(404, 'nope');
    expect(await call(agent, '/s')).toMatchObject({ status: 404, statusText: 'Not Found', text: 'nope', headers: {} });
  });

  it('sends a Buffer and a Uint8Array as they are', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/b' }).reply(200, Buffer.from([0x68, 0x69]));
    pool.intercept({ path: '/u' }).reply(200, new Uint8Array([0x6f, 0x6b]) as unknown as Buffer);
    expect((await call(agent, '/b')).text).toBe('hi');
    expect((await call(agent, '/u')).text).toBe('ok');
  });

  it('serialises an object as JSON', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/j' }).reply(200, { a: [1, 2], b: 'c' });
    const res = await agent.request({ origin: ORIGIN, path: '/j', method: 'GET' });
    expect(await res.body.json()).toEqual({ a: [1, 2], b: 'c' });
  });

  it('sends an empty body when there is no data', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/e' }).reply(204);
    expect(await call(agent, '/e')).toMatchObject({ status: 204, text: '' });
  });

  it('computes data from the request with a function', async () => {
    const { agent, pool } = setup();
    const seen: MockInterceptor.MockResponseCallbackOptions[] = [];
    pool.intercept({ path: '/echo', method: 'POST' }).reply(200, (opts) => {
      seen.push(opts);
      return { method: opts.method, body: opts.body, header: (opts.headers as Record<string, string>)['x-msg'] };
    });
    const got = await call(agent, '/echo', { method: 'POST', body: 'payload', headers: { 'x-msg': 'hello' } });
    expect(JSON.parse(got.text)).toEqual({ method: 'POST', body: 'payload', header: 'hello' });
    expect(seen[0]).toMatchObject({ path: '/echo', method: 'POST', origin: ORIGIN, body: 'payload', headers: { 'x-msg': 'hello' } });
  });

  it('awaits a data function that returns a promise', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/async' }).reply(200, async () => 'later');
    expect((await call(agent, '/async')).text).toBe('later');
  });

  it('sends reply headers and trailers; header names arrive lower-cased', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/h' }).reply(200, 'x', { headers: { 'X-One': '1', multi: ['a', 'b'] }, trailers: { 'Content-MD5': 'abc' } });
    const got = await call(agent, '/h');
    expect(got.headers).toEqual({ 'x-one': '1', multi: ['a', 'b'] });
    expect(got.trailers).toEqual({ 'content-md5': 'abc' });
  });
});

describe('reply(callback)', () => {
  it('takes status, data and options from the callback', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/cb', method: 'POST' }).reply(({ body, headers }) => ({
      statusCode: 201,
      data: { got: body, auth: (headers as Record<string, string>).authorization },
      responseOptions: { headers: { 'x-made': 'by callback' } },
    }));
    const got = await call(agent, '/cb', { method: 'POST', body: 'b', headers: { authorization: 'Bearer t' } });
    expect(got.status).toBe(201);
    expect(JSON.parse(got.text)).toEqual({ got: 'b', auth: 'Bearer t' });
    expect(got.headers).toEqual({ 'x-made': 'by callback' });
  });

  it('awaits a callback that returns a promise', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/cb' }).reply(async () => ({ statusCode: 202, data: 'async' }));
    expect(await call(agent, '/cb')).toMatchObject({ status: 202, text: 'async' });
  });

  it('fails the request when the callback returns no object', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/bad' }).reply((() => 'nope') as unknown as MockInterceptor.MockReplyOptionsCallback);
    await expect(call(agent, '/bad')).rejects.toThrow(
      'reply(callback): the callback must return an object { statusCode, data, responseOptions }',
    );
  });

  it('fails the request when the callback gives no status code, or invalid options', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/nostatus' }).reply((() => ({ data: 'x' })) as unknown as MockInterceptor.MockReplyOptionsCallback);
    pool.intercept({ path: '/badopts' }).reply((() => ({ statusCode: 200, responseOptions: 5 })) as unknown as MockInterceptor.MockReplyOptionsCallback);
    await expect(call(agent, '/nostatus')).rejects.toThrow('statusCode must be defined');
    await expect(call(agent, '/badopts')).rejects.toThrow('reply(callback): responseOptions must be an object, got number 5');
  });

  it('fails the request when the callback throws or rejects', async () => {
    const { agent, pool } = setup();
    const boom = new Error('callback failed');
    pool.intercept({ path: '/throws' }).reply(() => {
      throw boom;
    });
    pool.intercept({ path: '/rejects' }).reply(async () => {
      throw boom;
    });
    await expect(call(agent, '/throws')).rejects.toBe(boom);
    await expect(call(agent, '/rejects')).rejects.toBe(boom);
  });
});

describe('replyWithError(error)', () => {
  it('fails the matching request with the error', async () => {
    const { agent, pool } = setup();
    const kaboom = new Error('kaboom');
    pool.intercept({ path: '/err' }).replyWithError(kaboom);
    await expect(call(agent, '/err')).rejects.toBe(kaboom);
    expect(agent.pendingInterceptors()).toEqual([]);
  });

  it('requires an error', () => {
    const { pool } = setup();
    expect(() => pool.intercept({ path: '/' }).replyWithError(undefined as unknown as Error)).toThrow(
      'error must be defined',
    );
  });
});

describe('defaultReplyHeaders / defaultReplyTrailers / replyContentLength', () => {
  it('adds default headers and trailers to later replies; reply options win', async () => {
    const { agent, pool } = setup();
    pool
      .intercept({ path: '/d' })
      .defaultReplyHeaders({ 'x-default': 'd', 'x-over': 'default' })
      .defaultReplyTrailers({ 't-default': 'td' })
      .reply(200, 'x', { headers: { 'X-Over': 'reply' }, trailers: { 't-own': 'to' } });
    const got = await call(agent, '/d');
    expect(got.headers).toEqual({ 'x-default': 'd', 'x-over': 'reply' });
    expect(got.trailers).toEqual({ 't-default': 'td', 't-own': 'to' });
  });

  it('also applies them to reply(callback)', async () => {
    const { agent, pool } = setup();
    pool
      .intercept({ path: '/d' })
      .defaultReplyHeaders({ 'x-default': 'd' })
      .replyContentLength()
      .reply(() => ({ statusCode: 200, data: 'four' }));
    expect((await call(agent, '/d')).headers).toEqual({ 'x-default': 'd', 'content-length': '4' });
  });

  it('computes content-length from the body, data functions included', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/static' }).replyContentLength().reply(200, 'héllo');
    pool.intercept({ path: '/json' }).replyContentLength().reply(200, { a: 1 });
    pool.intercept({ path: '/fn' }).replyContentLength().reply(200, () => 'abc');
    expect((await call(agent, '/static')).headers['content-length']).toBe('6');
    expect((await call(agent, '/json')).headers['content-length']).toBe('7');
    expect((await call(agent, '/fn')).headers['content-length']).toBe('3');
  });

  it('reject non-objects', () => {
    const { pool } = setup();
    const i = pool.intercept({ path: '/' });
    expect(() => i.defaultReplyHeaders(undefined as unknown as Record<string, string>)).toThrow(
      'defaultReplyHeaders(headers): headers must be an object, got undefined',
    );
    expect(() => i.defaultReplyTrailers('x' as unknown as Record<string, string>)).toThrow(
      'defaultReplyTrailers(trailers): trailers must be an object, got string "x"',
    );
  });
});

describe('MockScope', () => {
  it('persist() answers every request', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/p' }).reply(200, 'again').persist();
    for (let i = 0; i < 5; i++) expect((await call(agent, '/p')).text).toBe('again');
  });

  it('times(n) answers n requests, then the next interceptor', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/t' }).reply(200, 'first').times(2);
    pool.intercept({ path: '/t' }).reply(200, 'second');
    expect((await call(agent, '/t')).text).toBe('first');
    expect((await call(agent, '/t')).text).toBe('first');
    expect((await call(agent, '/t')).text).toBe('second');
    await expect(call(agent, '/t')).rejects.toThrow(errors.MockNotMatchedError);
  });

  it('delay(ms) holds the reply for that long', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/slow' }).reply(200, 'late').delay(40);
    const start = performance.now();
    expect((await call(agent, '/slow')).text).toBe('late');
    expect(performance.now() - start).toBeGreaterThanOrEqual(35);
  });

  it('delay(ms) follows fake timers, and undelayed replies do not need them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'queueMicrotask'] });
    const { agent, pool } = setup();
    pool.intercept({ path: '/now' }).reply(200, 'now');
    expect((await call(agent, '/now')).text).toBe('now');
    pool.intercept({ path: '/slow' }).reply(200, 'late').delay(5000);
    let done = false;
    const pending = call(agent, '/slow').then((g) => {
      done = true;
      return g;
    });
    await vi.advanceTimersByTimeAsync(4000);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await pending).text).toBe('late');
  });

  it('delay also holds an error reply', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/e' }).replyWithError(new Error('slow failure')).delay(30);
    const start = performance.now();
    await expect(call(agent, '/e')).rejects.toThrow('slow failure');
    expect(performance.now() - start).toBeGreaterThanOrEqual(25);
  });

  it('validates delay and times', () => {
    const { pool } = setup();
    const scope = pool.intercept({ path: '/' }).reply(200);
    expect(scope).toBeInstanceOf(MockScope);
    for (const bad of [0, -1, 1.5, '10']) {
      expect(() => scope.delay(bad as number)).toThrow(errors.InvalidArgumentError);
      expect(() => scope.times(bad as number)).toThrow(errors.InvalidArgumentError);
    }
    expect(() => scope.delay(0)).toThrow('waitInMs must be a valid integer > 0');
    expect(() => scope.times(1.5)).toThrow('repeatTimes must be a valid integer > 0');
  });
});

describe('intercept(options) and reply() argument errors', () => {
  it('names what is wrong', () => {
    const { pool } = setup();
    const cases: [unknown, string][] = [
      [undefined, 'opts must be an object'],
      [{}, 'opts.path must be defined'],
      [{ path: 5 }, 'intercept(options): options.path must be a string, a RegExp or a function, got number 5'],
      [{ path: '/', method: 1 }, 'intercept(options): options.method must be a string, a RegExp or a function, got number 1'],
      [{ path: '/', body: {} }, 'intercept(options): options.body must be a string, a RegExp or a function, got an object'],
      [{ path: '/', headers: 'x' }, 'intercept(options): options.headers must be an object of matchers or a function, got string "x"'],
      [{ path: '/', headers: { a: {} } }, "intercept(options): header 'a' must be matched by a string, a RegExp or a function, got an object"],
      [{ path: '/', query: 'a=1' }, 'intercept(options): options.query must be an object, got string "a=1"'],
      [{ path: '/', ignoreTrailingSlash: 'yes' }, 'intercept(options): options.ignoreTrailingSlash must be a boolean, got string "yes"'],
    ];
    for (const [options, message] of cases) {
      expect(() => pool.intercept(options as MockInterceptor.Options)).toThrow(errors.InvalidArgumentError);
      expect(() => pool.intercept(options as MockInterceptor.Options)).toThrow(message);
    }
  });

  it('reply() checks the status code and the options', () => {
    const { pool } = setup();
    const i = pool.intercept({ path: '/' });
    expect(() => i.reply(undefined as unknown as number)).toThrow('statusCode must be defined');
    expect(() => i.reply(99)).toThrow('reply(statusCode): statusCode must be an integer from 200 to 999, got number 99');
    expect(() => i.reply(200, 'x', null as unknown as MockInterceptor.MockResponseOptions)).toThrow(
      'reply(statusCode, data, responseOptions): responseOptions must be an object, got null',
    );
    expect(() => i.reply(200, 'x', { headers: 'h' as unknown as Record<string, string> })).toThrow(
      'reply(statusCode, data, responseOptions): responseOptions.headers must be an object, got string "h"',
    );
  });

  it('can be built directly on an array of dispatches', () => {
    const dispatches: MockInterceptor.MockDispatch[] = [];
    new MockInterceptor({ path: '/x?b=2&a=1', method: 'post' }, dispatches).reply(200, 'direct');
    expect(dispatches).toHaveLength(1);
    expect(dispatches[0]).toMatchObject({ path: '/x?a=1&b=2', method: 'POST', times: 1, persist: false, timesInvoked: 0 });
  });
});
