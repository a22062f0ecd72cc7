// MockAgent.close() / destroy() must leave no unhandled rejection behind (Node's default turns
// one into a crash): after pass-through requests (enableNetConnect) completed or in flight, with
// mocked replies in flight, with a MockPool beside a real dispatcher, after disableNetConnect, and
// when closed twice. Each scenario collects 'unhandledRejection' while it runs and a few turns
// after, and expects none.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, MockAgent, MockPool, request } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** Lets pending rejections be noticed: Node reports them once the microtasks of a turn are done. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

async function origin(slow = false): Promise<{ url: string; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const srv = cleanup.track(
    await httpServer((_req, res) => {
      if (!slow) return void res.end('real');
      res.writeHead(200);
      res.write('part');
      void released.then(() => res.end());
    }),
  );
  return { url: srv.origin, release };
}

describe('MockAgent.close() leaves no unhandled rejection', () => {
  it('after a pass-through request that completed', async () => {
    const { url } = await origin();
    const agent = new MockAgent();
    agent.enableNetConnect();
    const res = await request(url, { dispatcher: agent });
    expect(await res.body.text()).toBe('real');
    await agent.close();
    await turns();
    expect(unhandled).toEqual([]);
  });

  it('with a pass-through request in flight (its body half read)', async () => {
    const { url, release } = await origin(true);
    const agent = new MockAgent();
    agent.enableNetConnect();
    const res = await request(url, { dispatcher: agent });
    const body = res.body.text().catch((err: Error) => err);
    const closed = agent.close();
    release();
    await closed;
    await body;
    await turns();
    expect(unhandled).toEqual([]);
  });

  it('with a pass-through request in flight, destroyed', async () => {
    const { url, release } = await origin(true);
    const agent = new MockAgent();
    agent.enableNetConnect();
    const res = await request(url, { dispatcher: agent });
    const body = res.body.text().catch((err: Error) => err);
    await agent.destroy();
    release();
    expect(await body).toBeInstanceOf(Error);
    await turns();
    expect(unhandled).toEqual([]);
  });

  it('with a delayed mocked reply in flight, closed and destroyed', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.get('http://mocked.test').intercept({ path: '/' }).reply(200, 'mocked').delay(50).times(2);
    const first = request('http://mocked.test/', { dispatcher: agent });
    const closed = agent.close();
    expect(await (await first).body.text()).toBe('mocked');
    await closed;
    const other = new MockAgent();
    other.get('http://mocked.test').intercept({ path: '/' }).reply(200, 'mocked').delay(50);
    const second = request('http://mocked.test/', { dispatcher: other }).catch((err: Error) => err);
    await other.destroy();
    expect(await second).toBeInstanceOf(Error);
    await turns();
    expect(unhandled).toEqual([]);
  });

  it('after pass-through requests then disableNetConnect, closed twice', async () => {
    const { url } = await origin();
    const agent = new MockAgent();
    agent.enableNetConnect();
    await (await request(url, { dispatcher: agent })).body.dump();
    agent.disableNetConnect();
    await expect(request(url, { dispatcher: agent })).rejects.toThrow();
    await agent.close();
    await agent.close();
    await turns();
    expect(unhandled).toEqual([]);
  });

  it('a MockPool beside a real Agent, with a pass-through request through a given agent', async () => {
    const { url } = await origin();
    const real = new Agent();
    cleanup.push(() => real.destroy());
    const agent = new MockAgent({ agent: real });
    agent.enableNetConnect(new URL(url).host);
    const pool = agent.get<MockPool>('http://mocked.test');
    pool.intercept({ path: '/' }).reply(200, 'mocked');
    expect(await (await request('http://mocked.test/', { dispatcher: agent })).body.text()).toBe('mocked');
    expect(await (await request(url, { dispatcher: agent })).body.text()).toBe('real');
    await pool.close();
    await agent.close();
    await turns();
    expect(unhandled).toEqual([]);
  });
});
