// Dispatcher construction and dispatch as undici orders and wires them (issue 35 item 15): Pool's
// `factory` checked before its origin; a custom `connect` given the client's socketPath; Agent's
// `factory` given the request's origin as it came; a Pool of Clients (`factory`) that makes the
// next Client instead of reporting backpressure; request options checked before the handler's hooks.
import { afterEach, describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { Agent, Client, Pool, RoundRobinPool, errors } from '../ts/index.js';
import type { Dispatcher, DispatchHandler, DispatchOptions } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('construction', () => {
  it("Pool checks `factory` before the origin (undici's order)", () => {
    expect(() => new Pool(null as never, { factory: '' as never })).toThrow(
      expect.objectContaining({ name: 'InvalidArgumentError', message: 'factory must be a function.' }),
    );
  });

  for (const [name, make] of [
    ['Client', (o: object) => new Client('http://localhost', o)],
    ['Pool', (o: object) => new Pool('http://localhost', o)],
    ['RoundRobinPool', (o: object) => new RoundRobinPool('http://localhost', o)],
  ] as const) {
    it(`${name}: a custom connect gets the socketPath option, and its error fails the request`, async () => {
      const connectError = new Error('custom connect error');
      const seen: unknown[] = [];
      const d = cleanup.add(
        make({
          socketPath: '/var/run/test.sock',
          connect(opts: { socketPath?: string }, cb: (err: Error | null, socket: null) => void) {
            seen.push(opts.socketPath);
            cb(connectError, null);
          },
        }),
      );
      const err = await d.request({ path: '/', method: 'GET' }).catch((e: unknown) => e);
      expect(err).toBe(connectError);
      expect(seen[0]).toBe('/var/run/test.sock');
    });
  }

  it("Agent's factory gets the request's origin as given: a URL or a string", async () => {
    const s = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const given: unknown[] = [];
    const agent = cleanup.add(
      new Agent({
        factory: (origin, opts) => {
          given.push(origin);
          return new Pool(origin, opts);
        },
      }),
    );
    const viaUrl = await agent.request({ origin: new URL(s.origin), path: '/', method: 'GET' });
    await viaUrl.body.dump();
    expect(given[0]).toBeInstanceOf(URL);
    const other = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const viaString = await agent.request({ origin: other.origin, path: '/', method: 'GET' });
    await viaString.body.dump();
    expect(given[1]).toBe(other.origin);
  });
});

/** A stand-in Client whose dispatch answers what `accept()` says; records who took each request. */
function fakeClients() {
  const seen: number[] = [];
  const made: FakeClient[] = [];
  let accept = true;
  class FakeClient extends EventEmitter {
    readonly id = made.length;
    closed = false;
    destroyed = false;
    constructor() {
      super();
      made.push(this);
    }
    dispatch(): boolean {
      seen.push(this.id);
      return accept;
    }
    async close(): Promise<void> {}
    async destroy(): Promise<void> {}
  }
  return {
    seen,
    made,
    setAccept: (v: boolean) => (accept = v),
    factory: () => new FakeClient() as unknown as Dispatcher,
  };
}

const noop: DispatchHandler = { onRequestStart() {}, onResponseError() {} };
const req: DispatchOptions = { path: '/', method: 'GET' };

describe('Pool with factory: backpressure', () => {
  it('a busy Client is passed over for the first free one, and the next Client is made at once', () => {
    const f = fakeClients();
    const pool = new Pool('http://notahost', { factory: f.factory });
    pool.dispatch(req, noop);
    pool.dispatch(req, noop);
    f.setAccept(false);
    pool.dispatch(req, noop); // c0 becomes busy; c1 is made for what comes next
    expect(f.made).toHaveLength(2);
    pool.dispatch(req, noop); // c1 busy too; c2 made
    f.setAccept(true);
    f.made[1]!.emit('drain', new URL('http://notahost'), [f.made[1]]);
    pool.dispatch(req, noop);
    f.made[0]!.emit('drain', new URL('http://notahost'), [f.made[0]]);
    pool.dispatch(req, noop); // the first free one: c0, not c2
    expect(f.seen).toEqual([0, 0, 0, 1, 1, 0]);
    expect(f.made).toHaveLength(3);
  });

  it('dispatch() reports no backpressure while another Client may still be made', async () => {
    const f = fakeClients();
    const pool = cleanup.add(new Pool('http://notahost', { factory: f.factory, connections: 2 }));
    f.setAccept(false);
    expect(pool.dispatch(req, noop)).toBe(true);
    expect(f.made).toHaveLength(2);
    expect(pool.dispatch(req, noop)).toBe(false); // both busy, no more may be made
  });
});

describe('dispatch: the request options before the handler', () => {
  const onlyError = (errs: Error[]): DispatchHandler => ({ onResponseError: (_c, e) => void errs.push(e) }) as DispatchHandler;

  for (const [name, make] of [
    ['Client', () => new Client('http://localhost:5000')],
    ['Pool', () => new Pool('http://localhost:5000')],
    ['Agent', () => new Agent()],
  ] as const) {
    it(`${name}: a bad option is reported before the handler's missing hooks, to its onResponseError`, () => {
      const d = cleanup.add(make());
      const cases: [Record<string, unknown>, string][] = [
        [{ upgrade: 1 }, 'upgrade must be a string'],
        [{ headersTimeout: 'asd' }, 'invalid headersTimeout'],
        [{ bodyTimeout: 'asd' }, 'invalid bodyTimeout'],
      ];
      for (const [extra, message] of cases) {
        const errs: Error[] = [];
        d.dispatch({ origin: 'http://localhost:5000', path: '/', method: 'GET', ...extra } as DispatchOptions, onlyError(errs));
        expect(errs.map((e) => [e.constructor, e.message]), message).toEqual([[errors.InvalidArgumentError, message]]);
      }
    });
  }

  it('a handler that is not an object throws first; null options go to onResponseError', () => {
    const client = cleanup.add(new Client('http://localhost:5000'));
    for (const handler of [null, 'asd']) {
      expect(() => client.dispatch({ path: '/', method: 'GET', upgrade: 1 } as never, handler as never)).toThrow('handler must be an object');
    }
    const errs: Error[] = [];
    client.dispatch(null as never, onlyError(errs));
    expect(errs.map((e) => e.message)).toEqual(['opts must be an object.']);
  });
});

describe('a request that fails at once takes no capacity', () => {
  for (const [name, make] of [
    ['RoundRobinPool', (o: string) => new RoundRobinPool(o, { connections: 1 })],
    ['Pool with clientTtl', (o: string) => new Pool(o, { connections: 1, clientTtl: 60_000 })],
  ] as const) {
    it(`${name} (one Client): an invalid request does not leave its Client set aside as busy`, async () => {
      const s = cleanup.add(await httpServer((_req, res) => res.end('ok')));
      const pool = cleanup.add(make(s.origin));
      const err = await pool.request({ path: '/', method: 'GET', headers: { x: 'a\nb' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
      const res = await pool.request({ path: '/', method: 'GET' });
      expect(await res.body.text()).toBe('ok');
    });
  }

  it('Client.dispatch returns true (undici) for a request that failed through its handler', () => {
    const client = cleanup.add(new Client('http://localhost:5000'));
    const errs: Error[] = [];
    const handler = { onRequestStart() {}, onResponseStart() {}, onResponseData() {}, onResponseEnd() {}, onResponseError: (_c: unknown, e: Error) => void errs.push(e) };
    expect(client.dispatch({ path: '/', method: 'GET', headers: { x: 'a\nb' } }, handler)).toBe(true);
    expect(client.dispatch({ path: '/', method: 'GET', bodyTimeout: -1 }, handler)).toBe(true);
    expect(errs).toHaveLength(2);
  });
});
