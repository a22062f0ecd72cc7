// MockAgent speaks undici's words (issue 11, item 12): argument errors, the not-matched headline
// with its interceptor counts, absolute intercept paths, and a miss reported to the handler.
import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent, errors, mockErrors } from '../ts/index.js';
import type { DispatchHandler, Dispatcher } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function agent(): MockAgent {
  const a = cleanup.add(new MockAgent({ enableCallHistory: true }));
  a.disableNetConnect();
  return a;
}

describe('argument errors with undici messages', () => {
  it('MockAgent, intercept(), reply(), replyWithError(), times(), delay(), enableNetConnect()', () => {
    const a = agent();
    const pool = a.get('http://x.test');
    const cases: [() => unknown, string][] = [
      [() => new MockAgent({ agent: {} as Dispatcher }), 'Argument opts.agent must implement Agent'],
      [() => pool.intercept(undefined as never), 'opts must be an object'],
      [() => pool.intercept({} as never), 'opts.path must be defined'],
      [() => pool.intercept({ path: '/' }).reply(undefined as never), 'statusCode must be defined'],
      [() => pool.intercept({ path: '/' }).replyWithError(undefined as never), 'error must be defined'],
      [() => pool.intercept({ path: '/' }).reply(200).times(0), 'repeatTimes must be a valid integer > 0'],
      [() => pool.intercept({ path: '/' }).reply(200).delay(-1), 'waitInMs must be a valid integer > 0'],
      [() => a.enableNetConnect(5 as never), 'Unsupported matcher. Must be one of String|Function|RegExp.'],
    ];
    for (const [call, message] of cases) expect(call).toThrow(new errors.InvalidArgumentError(message));
  });

  it('nthCall', () => {
    const history = agent().getCallHistory()!;
    expect(() => history.nthCall('1' as never)).toThrow(new errors.InvalidArgumentError('nthCall must be called with a number'));
    expect(() => history.nthCall(1.5)).toThrow(new errors.InvalidArgumentError('nthCall must be called with an integer'));
    expect(() => history.nthCall(0)).toThrow(
      new errors.InvalidArgumentError('nthCall must be called with a positive value. use firstCall or lastCall instead'),
    );
  });
});

describe('misses', () => {
  it("the headline is undici's, with the interceptor counts; ferro's hints follow on later lines", async () => {
    const a = agent();
    const pool = a.get('http://x.test');
    pool.intercept({ path: '/a' }).reply(200);
    pool.intercept({ path: '/b' }).reply(200);
    await (await a.request({ origin: 'http://x.test', path: '/a', method: 'GET' })).body.text();
    const err = await a.request({ origin: 'http://x.test', path: '/nope', method: 'POST' }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(mockErrors.MockNotMatchedError);
    const [headline, ...rest] = err!.message.split('\n');
    expect(headline).toBe(
      "Mock dispatch not matched for path '/nope': subsequent request to origin http://x.test was not allowed (net.connect disabled), 1 interceptor(s) remaining out of 2 defined",
    );
    expect(rest.length).toBeGreaterThan(0);
  });

  it('dispatch on MockAgent reports a miss to a handler that has onResponseError, and throws otherwise', () => {
    const a = agent();
    a.get('http://x.test').intercept({ path: '/a' }).reply(200);
    let heard: Error | null = null;
    const handler: DispatchHandler = {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData() {},
      onResponseEnd() {},
      onResponseError: (_c, e) => (heard = e),
    };
    expect(a.dispatch({ origin: 'http://x.test', path: '/nope', method: 'GET' }, handler)).toBe(false);
    expect(heard).toBeInstanceOf(mockErrors.MockNotMatchedError);
    expect(() => a.dispatch({ origin: 'http://x.test', path: '/nope', method: 'GET' }, {})).toThrow(
      mockErrors.MockNotMatchedError,
    );
  });
});

describe('intercept paths', () => {
  it('an absolute URL stands for its path and query', async () => {
    const a = agent();
    a.get('http://x.test').intercept({ path: 'http://x.test/abs?q=1' }).reply(200, 'abs');
    const res = await a.request({ origin: 'http://x.test', path: '/abs?q=1', method: 'GET' });
    expect(await res.body.text()).toBe('abs');
  });

  it("call history keeps the caller's headers value as given (undici's log does)", async () => {
    const a = agent();
    a.get('http://x.test').intercept({ path: '/' }).reply(200).persist();
    const headers = { 'x-a': '1' };
    await (await a.request({ origin: 'http://x.test', path: '/', method: 'GET', headers })).body.text();
    expect(a.getCallHistory()!.lastCall()!.headers).toBe(headers);
    const pairs = ['x-b', '2'];
    await (await a.request({ origin: 'http://x.test', path: '/', method: 'GET', headers: pairs })).body.text();
    expect(a.getCallHistory()!.lastCall()!.headers).toBe(pairs);
  });

  for (const [intercepted, requested] of [['', '/'], ['/', ''], ['', ''], ['/', '/'], ['/api/', '/api'], ['/api////', '/api//']]) {
    it(`ignoreTrailingSlash: an intercept for '${intercepted}' answers a request for '${requested}'`, async () => {
      const a = new MockAgent({ ignoreTrailingSlash: true });
      a.disableNetConnect();
      a.get('http://x.test').intercept({ path: intercepted }).reply(200, 'ok');
      const res = await a.request({ origin: 'http://x.test', path: requested, method: 'GET' });
      expect(await res.body.text()).toBe('ok');
      await a.close();
    });
  }
});

describe('reply(callback) runs at dispatch, as undici', () => {
  const quiet = (events: string[]): DispatchHandler => ({
    onRequestStart: () => events.push('start'),
    onResponseStart: () => events.push('response'),
    onResponseError: () => events.push('error'),
  });

  it('MockPool.dispatch throws when a synchronous callback gives no object; the handler hears nothing', async () => {
    const pool = agent().get('http://x.test');
    pool.intercept({ path: '/null' }).reply((() => null) as never);
    const events: string[] = [];
    expect(() => pool.dispatch({ path: '/null', method: 'GET' }, quiet(events))).toThrow(errors.InvalidArgumentError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
  });

  it('MockPool.dispatch throws what a synchronous callback throws', () => {
    const pool = agent().get('http://x.test');
    const kaboom = new Error('kaboom');
    pool.intercept({ path: '/throws' }).reply(() => {
      throw kaboom;
    });
    expect(() => pool.dispatch({ path: '/throws', method: 'GET' }, quiet([]))).toThrow(kaboom);
  });

  it('a delayed reply calls its callback when dispatched, not after the delay', async () => {
    const pool = agent().get('http://x.test');
    const order: string[] = [];
    pool.intercept({ path: '/later' }).reply(() => {
      order.push('callback');
      return { statusCode: 200, data: 'ok' };
    }).delay(20);
    const done = new Promise<void>((resolve) => {
      pool.dispatch({ path: '/later', method: 'GET' }, {
        onResponseStart: () => order.push('response'),
        onResponseEnd: () => resolve(),
      });
    });
    order.push('dispatched');
    await done;
    expect(order).toEqual(['callback', 'dispatched', 'response']);
  });

  it('an async callback that rejects after the request was aborted leaves no unhandled rejection', async () => {
    const pool = agent().get('http://x.test');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      pool.intercept({ path: '/rejects' }).reply(() => Promise.reject(new Error('late')));
      const failed = new Promise<Error>((resolve) => {
        pool.dispatch({ path: '/rejects', method: 'GET' }, {
          onRequestStart: (controller) => controller.abort(new Error('gone')),
          onResponseError: (_c, err) => resolve(err),
        });
      });
      expect((await failed).message).toBe('gone');
      // Unhandled rejections are reported once the microtask queue drains, before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
