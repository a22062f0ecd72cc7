// Every API over HTTP/3 (prior knowledge against the Rust test server): stream, pipeline,
// dispatch, fetch through an allowH3 Agent, an interceptor, MockAgent's pass-through; the
// diagnostics channels and the debug output name the protocol `h3`.
import { afterEach, describe, expect, it } from 'vitest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Writable, Readable } from 'node:stream';
import { pipeline as pipe } from 'node:stream/promises';
import { Agent, Client, EnvHttpProxyAgent, MockAgent, fetch, interceptors, type Dispatcher } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const h3 = { connect: { ca }, allowH3: true, h3Options: { priorKnowledge: true } };

async function setup(): Promise<{ origin: string; client: Client }> {
  const server = cleanup.add(await h3Server());
  return { origin: server.origin, client: cleanup.add(new Client(server.origin, h3)) };
}

describe('APIs over HTTP/3', () => {
  it('stream()', async () => {
    const { client } = await setup();
    const parts: Buffer[] = [];
    await client.stream({ path: '/big?100000', method: 'GET' }, () => new Writable({ write: (c, _e, cb) => (parts.push(c), cb()) }));
    expect(Buffer.concat(parts).length).toBe(100_000);
  });

  it('pipeline()', async () => {
    const { client } = await setup();
    const out: Buffer[] = [];
    await pipe(
      Readable.from([Buffer.from('piped '), Buffer.from('body')]),
      client.pipeline({ path: '/body', method: 'POST' }, ({ body }) => body),
      new Writable({ write: (c, _e, cb) => (out.push(c), cb()) }),
    );
    expect(Buffer.concat(out).toString()).toBe('piped body');
  });

  it('dispatch()', async () => {
    const { client } = await setup();
    const got = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      client.dispatch({ path: '/trailers', method: 'GET' }, {
        onRequestStart: () => {},
        onResponseStart: (_c, s) => void (status = s),
        onResponseData: (_c, chunk) => void chunks.push(chunk),
        onResponseEnd: () => resolve({ status, body: Buffer.concat(chunks).toString() }),
        onResponseError: (_c, e) => reject(e),
      } as Dispatcher.DispatchHandler);
    });
    expect(got).toEqual({ status: 200, body: 'ok' });
  });

  it('fetch() with an allowH3 Agent, and an interceptor', async () => {
    const { origin } = await setup();
    const agent = cleanup.add(new Agent(h3));
    const res = await fetch(`${origin}/echo`, { dispatcher: agent, method: 'POST', body: 'abc' });
    expect(res.headers.get('x-conn')).toBe('1');
    expect(((await res.json()) as { length: number }).length).toBe(3);
    const composed = agent.compose(interceptors.responseError());
    const bad = await composed.request({ origin, path: '/status?404', method: 'GET' }).catch((e: Error) => e);
    expect(bad).toBeInstanceOf(Error);
  });

  it('MockAgent passes unmatched requests through to HTTP/3', async () => {
    const { origin } = await setup();
    const mock = cleanup.add(new MockAgent(h3));
    mock.enableNetConnect();
    mock.get(origin).intercept({ path: '/mocked' }).reply(200, 'from mock');
    expect(await (await mock.request({ origin, path: '/mocked', method: 'GET' })).body.text()).toBe('from mock');
    const real = await mock.request({ origin, path: '/echo', method: 'GET' });
    expect(real.headers['x-conn']).toBe('1');
    await real.body.dump();
  });

  it("EnvHttpProxyAgent's direct requests", async () => {
    const { origin } = await setup();
    const env = cleanup.add(new EnvHttpProxyAgent({ ...h3, noProxy: '*' }));
    const res = await env.request({ origin, path: '/echo', method: 'GET' });
    expect(res.headers['x-conn']).toBe('1');
    await res.body.dump();
  });

  it('channels report h3 as the version', async () => {
    const { client } = await setup();
    const seen: string[] = [];
    const onConnected = (m: unknown): void => void seen.push((m as { connectParams: { version: string } }).connectParams.version);
    subscribe('lib:client:connected', onConnected);
    try {
      await (await client.request({ path: '/', method: 'GET' })).body.dump();
    } finally {
      unsubscribe('lib:client:connected', onConnected);
    }
    expect(seen).toEqual(['h3']);
  });
});
