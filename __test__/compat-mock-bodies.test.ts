// MockAgent and request bodies as undici 8 treats them (issue 35, item 9): a streamed body goes
// through the handler's body hooks chunk by chunk before any reply, reading stops when a hook
// aborts, and reply callbacks get the chunks again as Buffers. Also: duck-typed streams (pipe + on).
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent } from '../ts/index.js';
import type { DispatchHandler } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { httpServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const origin = 'http://mock-bodies.test';

function pool(): ReturnType<MockAgent['get']> {
  const agent = cleanup.add(new MockAgent());
  agent.disableNetConnect();
  return agent.get(origin);
}

interface Outcome {
  events: string[];
  response: string;
  error: Error | null;
}

/** Dispatches a POST of `body` through `dispatcher` with a handler logging every hook into `events`. */
function post(
  dispatcher: { dispatch: (o: never, h: DispatchHandler) => boolean },
  body: unknown,
  hooks: Partial<DispatchHandler> = {},
  events: string[] = [],
  to = origin,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const response: Buffer[] = [];
    const done = (error: Error | null): void => resolve({ events, response: Buffer.concat(response).toString(), error });
    const handler: DispatchHandler = {
      onRequestStart: () => events.push('start'),
      onBodySent: (chunk) => events.push(`body:${Buffer.from(chunk).toString()}`),
      onRequestSent: () => events.push('sent'),
      onResponseStart: () => events.push('response'),
      onResponseData: (_c, chunk) => response.push(chunk),
      onResponseEnd: () => done(null),
      onResponseError: (_c, err) => done(err),
      ...hooks,
    };
    dispatcher.dispatch({ origin: to, path: '/foo', method: 'POST', body } as never, handler);
  });
}

async function* twoChunks(events?: string[]): AsyncGenerator<Buffer> {
  events?.push('pull:he');
  yield Buffer.from('he');
  events?.push('pull:llo');
  yield Buffer.from('llo');
}

describe('a streamed request body goes through the body hooks before the reply', () => {
  it('onBodySent per chunk, then onRequestSent, then the response', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST', body: 'hello' }).reply(200, 'ok');
    const out = await post(p, twoChunks());
    expect(out.error).toBeNull();
    expect(out.events).toEqual(['start', 'body:he', 'body:llo', 'sent', 'response']);
    expect(out.response).toBe('ok');
  });

  it('a body that fails midway fails the request with its error, after the chunks before it', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST' }).reply(200, 'ok');
    const expected = new Error('fail');
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('he');
      throw expected;
    }
    const out = await post(p, failing());
    expect(out.error).toBe(expected);
    expect(out.events).toEqual(['start', 'body:he']);
  });

  it('an abort from onBodySent stops reading the body', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST' }).reply(200, 'ok');
    const expected = new Error('stop');
    const events: string[] = [];
    let controller: { abort(e: Error): void } | undefined;
    const out = await post(
      p,
      twoChunks(events),
      {
        onRequestStart: (c) => {
          controller = c;
        },
        onBodySent: (chunk) => {
          events.push(`body:${Buffer.from(chunk).toString()}`);
          controller!.abort(expected);
        },
      },
      events,
    );
    expect(out.error).toBe(expected);
    expect(out.events).toEqual(['pull:he', 'body:he']);
  });

  it('an onBodySent that throws fails the request with what it threw, before onRequestSent', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST' }).reply(200, 'ok');
    const expected = new Error('thrown');
    const out = await post(p, twoChunks(), {
      onBodySent: () => {
        throw expected;
      },
    });
    expect(out.error).toBe(expected);
    expect(out.events).toEqual(['start']);
  });

  it('reply(callback) runs after onRequestSent and gets the chunks again as Buffers', async () => {
    const p = pool();
    let given: unknown;
    const events: string[] = [];
    p.intercept({ path: '/foo', method: 'POST' }).reply((opts) => {
      events.push('callback');
      given = opts.body;
      return { statusCode: 200, data: 'ok' };
    });
    const out = await post(p, twoChunks(), {}, events);
    expect(out.events).toEqual(['start', 'body:he', 'body:llo', 'sent', 'callback', 'response']);
    const replayed: unknown[] = [];
    for await (const chunk of given as AsyncIterable<unknown>) replayed.push(chunk);
    expect(replayed.every((c) => Buffer.isBuffer(c))).toBe(true);
    expect(Buffer.concat(replayed as Buffer[]).toString()).toBe('hello');
  });

  it('a reply data function can read the replayed body', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST' }).reply(200, async (opts) => {
      const parts: Buffer[] = [];
      for await (const chunk of opts.body as unknown as AsyncIterable<Buffer>) parts.push(chunk);
      return Buffer.concat(parts).toString().toUpperCase();
    });
    const out = await post(p, twoChunks());
    expect(out.events).toEqual(['start', 'body:he', 'body:llo', 'sent', 'response']);
    expect(out.response).toBe('HELLO');
  });
});

/** A stream as readable-stream@2 or form-data make one: an emitter with pipe(), not a node:stream Readable. */
function duckStream(chunks: string[]): EventEmitter & { pipe(): void; pause(): void; resume(): void } {
  const emitter = new EventEmitter() as EventEmitter & { pipe(): void; pause(): void; resume(): void };
  emitter.pipe = () => {};
  emitter.pause = () => {};
  emitter.resume = () => {};
  setImmediate(() => {
    for (const c of chunks) emitter.emit('data', Buffer.from(c));
    emitter.emit('end');
  });
  return emitter;
}

describe('duck-typed streams as bodies', () => {
  it('are read and matched like a Readable', async () => {
    const p = pool();
    p.intercept({ path: '/foo', method: 'POST', body: 'hello' }).reply(200, 'matched');
    const out = await post(p, duckStream(['he', 'llo']));
    expect(out.error).toBeNull();
    // Readable.wrap may join chunks emitted together; what matters is the bytes and the order.
    const sent = out.events.filter((e) => e.startsWith('body:')).map((e) => e.slice(5));
    expect(sent.join('')).toBe('hello');
    expect(out.events).toEqual(['start', ...sent.map((c) => `body:${c}`), 'sent', 'response']);
    expect(out.response).toBe('matched');
  });
});

describe('a streamed body no interceptor matches goes on to the network', () => {
  async function echo(): Promise<string> {
    const server = cleanup.add(
      await httpServer((req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c));
        req.on('end', () => res.end(`echo:${Buffer.concat(parts).toString()}`));
      }),
    );
    return server.origin;
  }

  it('the handler hears each hook once, and the real response', async () => {
    const to = await echo();
    const agent = cleanup.add(new MockAgent());
    agent.get(to).intercept({ path: '/other', method: 'POST' }).reply(200, 'mocked');
    const out = await post(agent, twoChunks(), {}, [], to);
    expect(out.error).toBeNull();
    expect(out.events).toEqual(['start', 'body:he', 'body:llo', 'sent', 'response']);
    expect(out.response).toBe('echo:hello');
  });

  it('abort on the controller from onRequestStart reaches the real request', async () => {
    const to = await echo();
    const agent = cleanup.add(new MockAgent());
    agent.get(to).intercept({ path: '/other', method: 'POST' }).reply(200, 'mocked');
    const expected = new Error('enough');
    let controller: { abort(e: Error): void } | undefined;
    const events: string[] = [];
    const out = await post(
      agent,
      twoChunks(),
      {
        onRequestStart: (c) => {
          controller = c;
          events.push('start');
        },
        onResponseStart: () => {
          events.push('response');
          controller!.abort(expected);
        },
      },
      events,
      to,
    );
    expect(out.error).toBe(expected);
    expect(out.events).toEqual(['start', 'body:he', 'body:llo', 'sent', 'response']);
  });
});
