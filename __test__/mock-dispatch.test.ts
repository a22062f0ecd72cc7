// Mocked responses travel the same handler and controller path as real ones: the order of the
// callbacks, pause / resume, abort (by controller and by signal), handler errors, MockPool and
// MockClient used directly, close / destroy, composition — and fetch, stream, pipeline and the
// global dispatcher once those exist.
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import * as ferro from '../ts/index.js';
import { Agent, errors } from '../ts/index.js';
import type { DispatchController, DispatchHandler, DispatchOptions } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { MockClient } from '../ts/mock/mock-client.js';
import { MockPool } from '../ts/mock/mock-pool.js';

const ORIGIN = 'http://localhost:3000';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

function setup(options?: MockAgent.Options): MockAgent {
  const agent = new MockAgent(options);
  agent.disableNetConnect();
  cleanup.push(() => agent.close());
  return agent;
}

interface Recorded {
  events: string[];
  body: Buffer[];
  error?: Error;
  controller?: DispatchController;
  context?: object;
  trailers?: Record<string, string | string[]>;
  headers?: Record<string, string | string[]>;
  done: Promise<void>;
}

/** A controller-based handler that records what it sees; `hooks` act mid-response. */
/**
 * Mock replies are delivered from microtasks: once a macrotask turn has passed, everything the
 * mock would deliver without a resume has been delivered.
 */
const settled = (): Promise<void> => new Promise((r) => setImmediate(r));

function recorder(hooks: Partial<DispatchHandler> = {}): [DispatchHandler, Recorded] {
  let finish!: () => void;
  const rec: Recorded = { events: [], body: [], done: new Promise((r) => (finish = r)) };
  const handler: DispatchHandler = {
    onRequestStart(controller, context) {
      rec.controller = controller;
      rec.context = context;
      rec.events.push('start');
      hooks.onRequestStart?.(controller, context);
    },
    onResponseStart(controller, status, headers, message) {
      rec.events.push(`head ${status} ${message}`);
      rec.headers = headers;
      hooks.onResponseStart?.(controller, status, headers, message);
    },
    onResponseData(controller, chunk) {
      rec.events.push(`data ${chunk.length}`);
      rec.body.push(chunk);
      hooks.onResponseData?.(controller, chunk);
    },
    onResponseEnd(controller, trailers) {
      rec.events.push('end');
      rec.trailers = trailers;
      hooks.onResponseEnd?.(controller, trailers);
      finish();
    },
    onResponseError(_controller, err) {
      rec.events.push(`error ${err.message}`);
      rec.error = err;
      finish();
    },
  };
  return [handler, rec];
}

const GET: DispatchOptions = { origin: ORIGIN, path: '/r', method: 'GET' };

describe('the handler path', () => {
  it('calls onRequestStart, onResponseStart, onResponseData, onResponseEnd in order', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, 'hello', { headers: { 'X-A': 'b' }, trailers: { 'X-T': 'v' } });
    const [handler, rec] = recorder();
    expect(agent.dispatch(GET, handler)).toBe(true);
    // onRequestStart runs at dispatch, the response later, as with a live server.
    expect(rec.events).toEqual(['start']);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200 OK', 'data 5', 'end']);
    expect(Buffer.concat(rec.body).toString()).toBe('hello');
    expect(rec.headers).toEqual({ 'x-a': 'b' });
    expect(rec.trailers).toEqual({ 'x-t': 'v' });
    expect(typeof rec.context).toBe('object');
    expect(rec.controller!.rawHeaders!.map(String)).toEqual(['X-A', 'b']);
    expect(rec.controller!.rawTrailers!.map(String)).toEqual(['X-T', 'v']);
    expect(rec.controller!.aborted).toBe(false);
  });

  it('sends an empty body without a data callback', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(204);
    const [handler, rec] = recorder();
    agent.dispatch(GET, handler);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 204 No Content', 'end']);
  });

  it('replyWithError reaches onResponseError after onRequestStart', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).replyWithError(new Error('refused'));
    const [handler, rec] = recorder();
    agent.dispatch(GET, handler);
    await rec.done;
    expect(rec.events).toEqual(['start', 'error refused']);
  });
});

describe('pause and resume', () => {
  it('holds the body while paused from onResponseStart', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, 'held');
    const [handler, rec] = recorder({ onResponseStart: (c) => c.pause() });
    agent.dispatch(GET, handler);
    await settled();
    expect(rec.events).toEqual(['start', 'head 200 OK']);
    expect(rec.controller!.paused).toBe(true);
    rec.controller!.resume();
    expect(rec.events).toEqual(['start', 'head 200 OK']);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200 OK', 'data 4', 'end']);
  });

  it('stops between chunks of a large body', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, Buffer.alloc(200 * 1024, 1));
    let paused = false;
    const [handler, rec] = recorder({
      onResponseData: (c) => {
        if (!paused) {
          paused = true;
          c.pause();
        }
      },
    });
    agent.dispatch(GET, handler);
    await settled();
    expect(rec.events).toEqual(['start', 'head 200 OK', 'data 65536']);
    rec.controller!.resume();
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200 OK', 'data 65536', 'data 65536', 'data 65536', 'data 8192', 'end']);
  });

  it('keeps request() bodies flowing under backpressure', async () => {
    const agent = setup();
    const big = Buffer.alloc(1024 * 1024, 7);
    agent.get(ORIGIN).intercept({ path: '/big' }).reply(200, big);
    const res = await agent.request({ origin: ORIGIN, path: '/big', method: 'GET' });
    await settled();
    let total = 0;
    for await (const chunk of res.body) total += (chunk as Buffer).length;
    expect(total).toBe(big.length);
  });
});

describe('abort', () => {
  it('from onRequestStart: onResponseError once with the reason, nothing else', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, 'never');
    const reason = new Error('stop');
    const [handler, rec] = recorder({ onRequestStart: (c) => c.abort(reason) });
    agent.dispatch(GET, handler);
    await rec.done;
    await settled();
    expect(rec.events).toEqual(['start', 'error stop']);
    expect(rec.controller!.aborted).toBe(true);
    expect(rec.controller!.reason).toBe(reason);
  });

  it('mid-body: no more data, one error, however often abort is called', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, Buffer.alloc(200 * 1024));
    const [handler, rec] = recorder({
      onResponseData: (c) => {
        c.abort(new Error('enough'));
        c.abort(new Error('again'));
      },
    });
    agent.dispatch(GET, handler);
    await rec.done;
    await settled();
    expect(rec.events).toEqual(['start', 'head 200 OK', 'data 65536', 'error enough']);
  });

  it('a delayed reply aborted by a signal rejects with RequestAbortedError', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/slow' }).reply(200, 'too late').delay(5_000);
    const controller = new AbortController();
    const pending = agent.request({ origin: ORIGIN, path: '/slow', method: 'GET', signal: controller.signal });
    setImmediate(() => controller.abort());
    const start = performance.now();
    await expect(pending).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(performance.now() - start).toBeLessThan(2_000);
    // The interceptor was used by the aborted request.
    expect(agent.pendingInterceptors()).toEqual([]);
  });

  it('a handler that throws aborts with its error', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, 'x');
    const [handler, rec] = recorder({
      onResponseStart: () => {
        throw new Error('handler broke');
      },
    });
    agent.dispatch(GET, handler);
    await rec.done;
    expect(rec.events).toEqual(['start', 'head 200 OK', 'error handler broke']);
  });
});

describe('MockPool and MockClient used directly', () => {
  it('pool.request() and pool.dispatch() need no origin', async () => {
    const agent = setup();
    const pool = agent.get<MockPool>(ORIGIN);
    pool.intercept({ path: '/foo', method: 'GET' }).reply(200, 'foo');
    const res = await pool.request({ path: '/foo', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('foo');
    pool.intercept({ path: '/bar' }).reply(200, 'bar');
    const [handler, rec] = recorder();
    expect(pool.dispatch({ path: '/bar', method: 'GET' }, handler)).toBe(true);
    await rec.done;
    expect(Buffer.concat(rec.body).toString()).toBe('bar');
  });

  it('a MockClient behaves the same', async () => {
    const agent = setup({ connections: 1 });
    const client = agent.get<MockClient>(ORIGIN);
    expect(client).toBeInstanceOf(MockClient);
    client.intercept({ path: '/c' }).reply(200, 'client');
    const res = await client.request({ path: '/c', method: 'GET' });
    expect(await res.body.text()).toBe('client');
  });

  it('a miss on the pool says so, naming the pool origin', async () => {
    const agent = setup();
    const pool = agent.get(ORIGIN);
    await expect(pool.request({ path: '/none', method: 'GET' })).rejects.toThrow(
      `Mock dispatch not matched for path '/none': subsequent request to origin ${ORIGIN} was not allowed (net.connect disabled)`,
    );
  });

  it('closed and destroyed pools refuse requests through the handler', async () => {
    const agent = setup();
    const pool = agent.get<MockPool>(ORIGIN);
    await pool.close();
    expect(pool.closed).toBe(true);
    const [handler, rec] = recorder();
    expect(pool.dispatch({ path: '/', method: 'GET' }, handler)).toBe(false);
    await rec.done;
    expect(rec.error).toBeInstanceOf(errors.ClientClosedError);

    const other = agent.get<MockPool>('http://other.test');
    await other.destroy();
    expect(other.destroyed).toBe(true);
    const [handler2, rec2] = recorder();
    expect(other.dispatch({ path: '/', method: 'GET' }, handler2)).toBe(false);
    await rec2.done;
    expect(rec2.error).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('close() waits for replies in flight; destroy() fails them', async () => {
    const agent = setup();
    const pool = agent.get<MockPool>(ORIGIN);
    pool.intercept({ path: '/a' }).reply(200, 'a').delay(20);
    const res = pool.request({ path: '/a', method: 'GET' });
    await pool.close();
    expect(await (await res).body.text()).toBe('a');

    const pool2 = agent.get<MockPool>(ORIGIN);
    pool2.intercept({ path: '/b' }).reply(200, 'b').delay(5_000);
    const res2 = pool2.request({ path: '/b', method: 'GET' });
    await pool2.destroy();
    await expect(res2).rejects.toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('can be constructed with a MockAgent, and refuses anything else', () => {
    const agent = setup();
    const pool = new MockPool(ORIGIN, { agent });
    expect(pool.intercept({ path: '/' })).toBeDefined();
    const client = new MockClient(ORIGIN, { agent });
    expect(client).toBeInstanceOf(ferro.Dispatcher);
    expect(() => new MockPool(ORIGIN, {} as MockPool.Options)).toThrow(
      'options.agent must be a MockAgent (an object with a dispatch method)',
    );
    expect(() => new MockClient(ORIGIN, { agent: {} as MockAgent })).toThrow(errors.InvalidArgumentError);
  });

  it('a pool on a plain agent mocks, and sends misses to that agent', async () => {
    const plain = new Agent();
    cleanup.push(() => plain.close());
    const pool = new MockPool(ORIGIN, { agent: plain as unknown as MockAgent });
    pool.intercept({ path: '/x' }).reply(200, 'standalone');
    expect(await (await pool.request({ path: '/x', method: 'GET' })).body.text()).toBe('standalone');
  });

  it('pool ignoreTrailingSlash option', async () => {
    const agent = setup();
    const pool = new MockPool(ORIGIN, { agent, ignoreTrailingSlash: true });
    pool.intercept({ path: '/s' }).reply(200, 'slash');
    expect(await (await pool.request({ path: '/s/', method: 'GET' })).body.text()).toBe('slash');
  });
});

describe('composition', () => {
  it('interceptors composed onto a MockAgent see mocked responses', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/r' }).reply(200, 'composed');
    const statuses: number[] = [];
    const composed = agent.compose((dispatch) => (opts, handler) =>
      dispatch(opts, {
        ...handler,
        onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
        onResponseStart: (c, status, headers, text) => {
          statuses.push(status);
          handler.onResponseStart?.(c, status, headers, text);
        },
        onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
        onResponseEnd: (c, t) => handler.onResponseEnd?.(c, t),
        onResponseError: (c, e) => handler.onResponseError?.(c, e),
      }),
    );
    const res = await composed.request({ origin: ORIGIN, path: '/r', method: 'GET' });
    expect(await res.body.text()).toBe('composed');
    expect(statuses).toEqual([200]);
  });
});

const fetchFn = ferro.fetch;
const { setGlobalDispatcher, getGlobalDispatcher } = ferro;
const topRequest = ferro.request;
const streamFn = ferro.stream;
const pipelineFn = ferro.pipeline;

describe('higher-level APIs over a MockAgent', () => {
  function withGlobal(agent: MockAgent): void {
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(agent);
    cleanup.push(() => setGlobalDispatcher(previous));
  }

  it('fetch with a MockAgent dispatcher', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/f', method: 'POST', body: '{"a":1}' }).reply(201, { ok: true }, { headers: { 'content-type': 'application/json' } });
    const res = await fetchFn(`${ORIGIN}/f`, { method: 'POST', body: '{"a":1}', dispatcher: agent });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('fetch through setGlobalDispatcher', async () => {
    const agent = setup();
    withGlobal(agent);
    agent.get(ORIGIN).intercept({ path: '/g' }).reply(200, 'global');
    const res = await fetchFn(`${ORIGIN}/g`);
    expect(await res.text()).toBe('global');
    expect(Reflect.get(globalThis, Symbol.for('lib.globalDispatcher.2'))).toBe(agent);
  });

  it('fetch aborted during a delayed reply', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/slow' }).reply(200, 'late').delay(5_000);
    const pending = fetchFn(`${ORIGIN}/slow`, { dispatcher: agent, signal: AbortSignal.timeout(20) });
    await expect(pending).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(pending).rejects.toBeInstanceOf(DOMException);
  });

  it('request() through setGlobalDispatcher', async () => {
    const agent = setup();
    withGlobal(agent);
    agent.get(ORIGIN).intercept({ path: '/foo' }).reply(200, 'foo');
    const { statusCode, body } = await topRequest(`${ORIGIN}/foo`);
    expect(statusCode).toBe(200);
    expect(await body.text()).toBe('foo');
  });

  it('stream()', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/s' }).reply(200, 'streamed');
    let out = '';
    await streamFn(`${ORIGIN}/s`, { method: 'GET', dispatcher: agent }, () =>
      new Writable({
        write(chunk, _enc, done) {
          out += String(chunk);
          done();
        },
      }),
    );
    expect(out).toBe('streamed');
  });

  it('pipeline()', async () => {
    const agent = setup();
    agent.get(ORIGIN).intercept({ path: '/p', method: 'PUT', body: 'up' }).reply(200, (opts) => `echo ${String(opts.body)}`);
    const duplex = pipelineFn(`${ORIGIN}/p`, { method: 'PUT', dispatcher: agent }, ({ body }) => body);
    let out = '';
    duplex.on('data', (c: Buffer) => (out += String(c)));
    duplex.end('up');
    await new Promise((resolve, reject) => duplex.on('end', resolve).on('error', reject));
    expect(out).toBe('echo up');
  });
});
