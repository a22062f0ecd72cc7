// MockAgent: options, get(), routing by origin, activation, net connect (against real local
// servers), pending interceptors and their table, close and destroy.
import { describe, expect, it } from 'vitest';
import type { IncomingMessage, Server } from 'node:http';
import { Dispatcher, errors } from '../ts/index.js';
import type { DispatchHandler, DispatchOptions } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { MockClient } from '../ts/mock/mock-client.js';
import { MockPool } from '../ts/mock/mock-pool.js';
import type { MockInterceptor } from '../ts/mock/mock-interceptor.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const ORIGIN = 'http://localhost:3000';

const cleanup = useCleanup();

function mockAgent(options?: MockAgent.Options): MockAgent {
  const agent = new MockAgent(options);
  cleanup.push(() => agent.close());
  return agent;
}

async function server(): Promise<Running<Server> & { seen: string[] }> {
  const seen: string[] = [];
  const running = await httpServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.setHeader('x-real', 'yes');
    res.end(`real ${req.url}`);
  });
  cleanup.push(() => running.close());
  return Object.assign(running, { seen });
}

async function get(dispatcher: Dispatcher, origin: string, path: string): Promise<{ status: number; text: string }> {
  const res = await dispatcher.request({ origin, path, method: 'GET' });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('new MockAgent(options)', () => {
  it('is a Dispatcher, active from the start', () => {
    const agent = mockAgent();
    expect(agent).toBeInstanceOf(Dispatcher);
    expect(agent.isMockActive).toBe(true);
  });

  it('rejects an agent option without dispatch', () => {
    expect(() => new MockAgent({ agent: {} as Dispatcher })).toThrow(errors.InvalidArgumentError);
    expect(() => new MockAgent({ agent: {} as Dispatcher })).toThrow(
      'Argument opts.agent must implement Agent',
    );
  });

  it('rejects non-boolean flags and non-object options', () => {
    expect(() => new MockAgent({ ignoreTrailingSlash: 'yes' as unknown as boolean })).toThrow(
      'options.ignoreTrailingSlash must be a boolean',
    );
    expect(() => new MockAgent({ enableCallHistory: 1 as unknown as boolean })).toThrow(
      'options.enableCallHistory must to be a boolean',
    );
    expect(() => new MockAgent({ acceptNonStandardSearchParameters: null as unknown as boolean })).toThrow(
      'options.acceptNonStandardSearchParameters must be a boolean',
    );
    expect(() => new MockAgent('x' as unknown as MockAgent.Options)).toThrow('MockAgent options must be an object, got string');
  });

  it('passes the Agent options to the real agent it makes', () => {
    expect(() => new MockAgent({ maxOrigins: 0 })).toThrow(errors.InvalidArgumentError);
  });

  it('sends unmatched requests to the given agent', async () => {
    const seen: DispatchOptions[] = [];
    class Recorder extends Dispatcher {
      override dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
        seen.push(opts);
        const controller = { aborted: false, paused: false, reason: null, rawHeaders: null, rawTrailers: null, abort() {}, pause() {}, resume() {} };
        handler.onRequestStart?.(controller, {});
        handler.onResponseStart?.(controller, 204, {}, 'No Content');
        handler.onResponseEnd?.(controller, {});
        return true;
      }
      override close(): Promise<void>;
      override close(cb: () => void): void;
      override close(cb?: () => void): Promise<void> | void {
        if (cb) return cb();
        return Promise.resolve();
      }
      override destroy(): Promise<void> {
        return Promise.resolve();
      }
    }
    const agent = mockAgent({ agent: new Recorder() });
    agent.get(ORIGIN).intercept({ path: '/mocked' }).reply(200, 'mock');
    expect(await get(agent, ORIGIN, '/mocked')).toEqual({ status: 200, text: 'mock' });
    expect(await get(agent, ORIGIN, '/other')).toEqual({ status: 204, text: '' });
    expect(seen.map((o) => o.path)).toEqual(['/other']);
  });
});

describe('mockAgent.get(origin)', () => {
  it('returns the same MockPool for the same origin, however it is spelled', () => {
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    expect(pool).toBeInstanceOf(MockPool);
    expect(agent.get(ORIGIN)).toBe(pool);
    expect(agent.get(`${ORIGIN}/`)).toBe(pool);
    expect(agent.get('HTTP://LOCALHOST:3000')).toBe(pool);
    expect(agent.get(new URL(ORIGIN))).toBe(pool);
    expect(agent.get('http://localhost:3001')).not.toBe(pool);
  });

  it('returns a MockClient when connections is 1', () => {
    const agent = mockAgent({ connections: 1 });
    const client = agent.get(ORIGIN);
    expect(client).toBeInstanceOf(MockClient);
    expect(agent.get(ORIGIN)).toBe(client);
  });

  it('routes by a RegExp origin', async () => {
    const agent = mockAgent();
    agent.disableNetConnect();
    const pool = agent.get(/^http:\/\/localhost:300\d$/);
    expect(agent.get(/^http:\/\/localhost:300\d$/)).toBe(pool);
    pool.intercept({ path: '/r' }).reply(200, 'by regexp').times(2);
    expect(await get(agent, 'http://localhost:3001', '/r')).toEqual({ status: 200, text: 'by regexp' });
    expect(await get(agent, 'http://localhost:3002', '/r')).toEqual({ status: 200, text: 'by regexp' });
    await expect(get(agent, 'http://localhost:4000', '/r')).rejects.toThrow(errors.MockNotMatchedError);
  });

  it('routes by a function origin', async () => {
    const agent = mockAgent();
    agent.disableNetConnect();
    const match = (origin: string): boolean => origin.endsWith('.test');
    const pool = agent.get(match);
    expect(agent.get(match)).toBe(pool);
    pool.intercept({ path: '/f' }).reply(200, 'by function');
    expect(await get(agent, 'https://api.example.test', '/f')).toEqual({ status: 200, text: 'by function' });
  });

  it('tries an exact origin before a matcher', async () => {
    const agent = mockAgent();
    agent.get(/localhost/).intercept({ path: '/x' }).reply(200, 'matcher');
    agent.get(ORIGIN).intercept({ path: '/x' }).reply(200, 'exact');
    expect((await get(agent, ORIGIN, '/x')).text).toBe('exact');
    expect((await get(agent, ORIGIN, '/x')).text).toBe('matcher');
  });

  it('rejects other origin types', () => {
    const agent = mockAgent();
    expect(() => agent.get(42 as unknown as string)).toThrow(errors.InvalidArgumentError);
    expect(() => agent.get(42 as unknown as string)).toThrow(
      'get(origin): origin must be a string, a URL, a RegExp or a function, got number',
    );
  });
});

describe('mockAgent.dispatch', () => {
  it('validates its arguments', () => {
    const agent = mockAgent();
    const handler: DispatchHandler = {};
    expect(() => agent.dispatch({ path: '/', method: 'GET' }, handler)).toThrow(
      'opts.origin must be a non-empty string or URL.',
    );
    expect(() => agent.dispatch(null as unknown as DispatchOptions, handler)).toThrow('opts must be an object.');
    expect(() => agent.dispatch({ origin: ORIGIN, path: '/', method: 'GET' }, null as unknown as DispatchHandler)).toThrow(
      'handler must be an object',
    );
  });

  it('accepts a URL origin', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/u' }).reply(200, 'url');
    const res = await agent.request({ origin: new URL(ORIGIN), path: '/u', method: 'GET' });
    expect(await res.body.text()).toBe('url');
  });
});

describe('activate / deactivate', () => {
  it('sends everything to the network while deactivated', async () => {
    const real = await server();
    const agent = mockAgent();
    agent.get(real.origin).intercept({ path: '/a' }).reply(200, 'mocked').persist();
    expect((await get(agent, real.origin, '/a')).text).toBe('mocked');
    agent.deactivate();
    expect(agent.isMockActive).toBe(false);
    expect((await get(agent, real.origin, '/a')).text).toBe('real /a');
    agent.activate();
    expect(agent.isMockActive).toBe(true);
    expect((await get(agent, real.origin, '/a')).text).toBe('mocked');
    expect(real.seen).toEqual(['GET /a']);
  });
});

describe('net connect', () => {
  it('lets unmatched requests reach the network by default', async () => {
    const real = await server();
    const agent = mockAgent();
    agent.get(real.origin).intercept({ path: '/mocked' }).reply(200, 'mocked');
    expect(await get(agent, real.origin, '/unmocked')).toEqual({ status: 200, text: 'real /unmocked' });
  });

  it('reaches a real server through enableNetConnect(host) while other origins stay mocked', async () => {
    const real = await server();
    const agent = mockAgent();
    agent.disableNetConnect();
    agent.enableNetConnect(`127.0.0.1:${real.port}`);
    agent.get(real.origin).intercept({ path: '/mocked' }).reply(200, 'mocked');
    agent.get('http://api.example.test').intercept({ path: '/data' }).reply(200, 'mocked elsewhere');

    expect((await get(agent, real.origin, '/mocked')).text).toBe('mocked');
    expect((await get(agent, real.origin, '/live')).text).toBe('real /live');
    expect((await get(agent, 'http://api.example.test', '/data')).text).toBe('mocked elsewhere');
    await expect(get(agent, 'http://api.example.test', '/not-mocked')).rejects.toThrow(
      "Mock dispatch not matched for path '/not-mocked': subsequent request to origin http://api.example.test " +
        'was not allowed (net.connect is not enabled for this origin)',
    );
    expect(real.seen).toEqual(['GET /live']);
  });

  it('accepts a host name without port, a RegExp and a function, and adds each to the list', async () => {
    const real = await server();
    const agent = mockAgent();
    agent.disableNetConnect();
    const allowed = (origin: string): Promise<string> => get(agent, origin, '/').then((r) => r.text);
    const blocked = /net\.connect is not enabled for this origin/;

    agent.enableNetConnect('localhost');
    await expect(allowed(real.origin)).rejects.toThrow(blocked);
    agent.enableNetConnect('127.0.0.1');
    expect(await allowed(real.origin)).toBe('real /');

    agent.disableNetConnect();
    agent.enableNetConnect(/^127\.0\.0\.1:\d+$/);
    expect(await allowed(real.origin)).toBe('real /');

    agent.disableNetConnect();
    const seenHosts: string[] = [];
    agent.enableNetConnect((host) => {
      seenHosts.push(host);
      return host === `127.0.0.1:${real.port}`;
    });
    expect(await allowed(real.origin)).toBe('real /');
    expect(seenHosts).toEqual([`127.0.0.1:${real.port}`]);

    agent.enableNetConnect();
    expect(await allowed(real.origin)).toBe('real /');
  });

  it('says net connect is disabled when it is', async () => {
    const agent = mockAgent();
    agent.disableNetConnect();
    const err = await get(agent, ORIGIN, '/nothing').catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.MockNotMatchedError);
    expect((err as InstanceType<typeof errors.MockNotMatchedError>).code).toBe('UND_MOCK_ERR_MOCK_NOT_MATCHED');
    expect((err as Error).message).toContain(
      `Mock dispatch not matched for path '/nothing': subsequent request to origin ${ORIGIN} was not allowed (net.connect disabled)`,
    );
  });

  it('throws synchronously from dispatch on a miss, like undici', () => {
    const agent = mockAgent();
    agent.disableNetConnect();
    expect(() => agent.dispatch({ origin: ORIGIN, path: '/', method: 'GET' }, {})).toThrow(errors.MockNotMatchedError);
  });

  it('rejects an unsupported matcher', () => {
    const agent = mockAgent();
    expect(() => agent.enableNetConnect(5 as unknown as string)).toThrow(
      'Unsupported matcher. Must be one of String|Function|RegExp.',
    );
  });
});

describe('pendingInterceptors / assertNoPendingInterceptors', () => {
  it('lists interceptors not yet used up, with their origin', async () => {
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/once' }).reply(200, 'x');
    pool.intercept({ path: '/twice', method: 'post' }).reply(201).times(2);
    pool.intercept({ path: '/always' }).reply(200).persist();
    pool.intercept({ path: '/used' }).reply(200);
    await get(agent, ORIGIN, '/used');
    await agent.request({ origin: ORIGIN, path: '/twice', method: 'POST' }).then((r) => r.body.text());

    const pending = agent.pendingInterceptors();
    expect(pending.map((p) => [p.method, p.path, p.timesInvoked, p.times, p.persist, p.origin])).toEqual([
      ['GET', '/once', 0, 1, false, ORIGIN],
      ['POST', '/twice', 1, 2, false, ORIGIN],
      ['GET', '/always', 0, 1, true, ORIGIN],
    ]);
    expect(pending[0]).toMatchObject({
      consumed: false,
      pending: true,
      body: undefined,
      headers: undefined,
      data: { error: null, statusCode: 200, data: 'x', headers: {}, trailers: {} },
    });

    await get(agent, ORIGIN, '/always');
    expect(agent.pendingInterceptors().map((p) => p.path)).toEqual(['/once', '/twice']);
  });

  it('throws a table of the pending ones', () => {
    const agent = mockAgent();
    agent.get('https://example.com').intercept({ method: 'GET', path: '/' }).reply(200);
    let message = '';
    try {
      agent.assertNoPendingInterceptors();
    } catch (err) {
      expect(err).toBeInstanceOf(errors.UndiciError);
      message = (err as Error).message;
    }
    expect(message.split('\n')).toEqual([
      '1 interceptor is pending:',
      '',
      '┌─────────┬────────┬───────────────────────┬──────┬─────────────┬────────────┬─────────────┬───────────┐',
      '│ (index) │ Method │ Origin                │ Path │ Status code │ Persistent │ Invocations │ Remaining │',
      '├─────────┼────────┼───────────────────────┼──────┼─────────────┼────────────┼─────────────┼───────────┤',
      "│ 0       │ 'GET'  │ 'https://example.com' │ '/'  │ 200         │ '❌'       │ 0           │ 1         │",
      '└─────────┴────────┴───────────────────────┴──────┴─────────────┴────────────┴─────────────┴───────────┘',
    ]);
  });

  it('counts several, shows persistent ones with Infinity remaining, and errors as such', () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/a' }).reply(200).persist();
    agent.get(ORIGIN).intercept({ path: '/b' }).replyWithError(new Error('boom'));
    expect(() => agent.assertNoPendingInterceptors()).toThrow(/^2 interceptors are pending:\n\n┌/);
    expect(() => agent.assertNoPendingInterceptors()).toThrow(/'✅' +│ 0 +│ Infinity/);
    expect(() => agent.assertNoPendingInterceptors()).toThrow(/'\/b' +│ 'error'/);
  });

  it('uses a custom formatter', () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/a' }).reply(200);
    const pendingInterceptorsFormatter = {
      format: (pending: readonly MockAgent.PendingInterceptor[]) => pending.map((p) => `${p.origin}${String(p.path)}`).join(','),
    };
    expect(() => agent.assertNoPendingInterceptors({ pendingInterceptorsFormatter })).toThrow(
      `1 interceptor is pending:\n\n${ORIGIN}/a`,
    );
  });

  it('is silent when nothing is pending', async () => {
    const agent = mockAgent();
    agent.get(ORIGIN).intercept({ path: '/a' }).reply(200);
    await get(agent, ORIGIN, '/a');
    expect(() => agent.assertNoPendingInterceptors()).not.toThrow();
    expect(agent.pendingInterceptors()).toEqual([]);
  });
});

describe('matching options on the agent', () => {
  it('ignoreTrailingSlash applies to every pool and interceptor', async () => {
    const agent = mockAgent({ ignoreTrailingSlash: true });
    agent.get(ORIGIN).intercept({ path: '/slash/' }).reply(200, 'a').persist();
    expect((await get(agent, ORIGIN, '/slash')).text).toBe('a');
    expect((await get(agent, ORIGIN, '/slash/')).text).toBe('a');
    expect((await get(agent, ORIGIN, '/slash//')).text).toBe('a');
  });

  it('acceptNonStandardSearchParameters reads a[]=1 and a=1,2 as repeated parameters', async () => {
    const agent = mockAgent({ acceptNonStandardSearchParameters: true });
    agent.disableNetConnect();
    agent.get(ORIGIN).intercept({ path: '/q', query: { a: ['1', '2'], s: "'x,y'" } }).reply(200, 'ok').persist();
    expect((await get(agent, ORIGIN, "/q?a[]=1&a[]=2&s='x,y'")).text).toBe('ok');
    expect((await get(agent, ORIGIN, "/q?a=1,2&s='x,y'")).text).toBe('ok');

    const strict = mockAgent();
    strict.disableNetConnect();
    strict.get(ORIGIN).intercept({ path: '/q', query: { a: ['1', '2'] } }).reply(200, 'ok').persist();
    await expect(get(strict, ORIGIN, '/q?a[]=1&a[]=2')).rejects.toThrow(errors.MockNotMatchedError);
    expect((await get(strict, ORIGIN, '/q?a=1&a=2')).text).toBe('ok');
  });
});

describe('close / destroy', () => {
  it('close() closes the pools and refuses later requests', async () => {
    const agent = new MockAgent();
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/' }).reply(200);
    await agent.close();
    expect(agent.closed).toBe(true);
    expect((pool as MockPool).closed).toBe(true);
    expect(() => agent.dispatch({ origin: ORIGIN, path: '/', method: 'GET' }, {})).toThrow(errors.ClientClosedError);
  });

  it('close() waits for replies in flight', async () => {
    const agent = new MockAgent();
    agent.get(ORIGIN).intercept({ path: '/slow' }).reply(200, 'late').delay(30);
    const pending = agent.request({ origin: ORIGIN, path: '/slow', method: 'GET' });
    const closed = agent.close();
    const res = await pending;
    expect(await res.body.text()).toBe('late');
    await closed;
  });

  it('close(callback) and destroy(callback) call back', async () => {
    const a = new MockAgent();
    await new Promise<void>((resolve) => a.close(() => resolve()));
    const b = new MockAgent();
    await new Promise<void>((resolve) => b.destroy(() => resolve()));
    expect(b.destroyed).toBe(true);
    expect(() => b.dispatch({ origin: ORIGIN, path: '/', method: 'GET' }, {})).toThrow(errors.ClientDestroyedError);
  });

  it('destroy(err) fails replies in flight with err', async () => {
    const agent = new MockAgent();
    agent.get(ORIGIN).intercept({ path: '/slow' }).reply(200, 'late').delay(1000);
    const pending = agent.request({ origin: ORIGIN, path: '/slow', method: 'GET' });
    const boom = new Error('going away');
    await agent.destroy(boom);
    await expect(pending).rejects.toBe(boom);
  });

  it('a pool closed on its own is replaced by a new one', async () => {
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    await pool.close();
    expect(agent.get(ORIGIN)).not.toBe(pool);
  });
});

describe('types', () => {
  it('accept code written against undici', () => {
    // Compile-time checks mostly: these shapes are what undici's typings offer.
    const agent: Dispatcher = mockAgent({ connections: 1, ignoreTrailingSlash: false, enableCallHistory: true });
    const typed = agent as MockAgent;
    const pool: MockPool = typed.get<MockPool>(ORIGIN);
    const options: MockInterceptor.MockResponseOptions = { headers: { a: 'b' }, trailers: { c: 'd' } };
    const scope = pool.intercept({ path: '/t' }).reply<{ ok: boolean }>(200, { ok: true }, options);
    scope.delay(1).times(2).persist();
    expect(typed.getCallHistory()?.calls()).toEqual([]);
  });
});
