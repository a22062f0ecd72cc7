// Header records while Object.prototype[Symbol.iterator] is polluted (issue 35 item 10): a plain
// object's headers are its own keys, never what an iterator planted on Object.prototype yields
// (which would send no headers at all). Only an own iterator or a non-Object prototype's counts.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Agent, Client, interceptors } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { Cleanup } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Runs `fn` with an empty generator planted on Object.prototype[Symbol.iterator]. */
async function polluted<T>(fn: () => Promise<T>): Promise<T> {
  const proto = Object.prototype as { [Symbol.iterator]?: unknown };
  const had = Object.hasOwn(proto, Symbol.iterator);
  const original = proto[Symbol.iterator];
  proto[Symbol.iterator] = function* () {};
  try {
    return await fn();
  } finally {
    if (had) proto[Symbol.iterator] = original;
    else delete proto[Symbol.iterator];
  }
}

/** A server answering with the x-custom header it got; /redirect sends the client to /target. */
async function server() {
  const srv = createServer((req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/target' }).end();
      return;
    }
    res.end(`x-custom=${req.headers['x-custom']}`);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  cleanup.defer(() => new Promise<void>((r) => {
    srv.closeAllConnections();
    srv.close(() => r());
  }));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

describe('a polluted Object.prototype[Symbol.iterator] does not empty header records', () => {
  it('Client.request sends a record\'s headers', async () => {
    const origin = await server();
    const client = cleanup.add(new Client(origin));
    const text = await polluted(async () => {
      const res = await client.request({ path: '/', method: 'GET', headers: { 'X-Custom': 'ok' } });
      return res.body.text();
    });
    expect(text).toBe('x-custom=ok');
  });

  it('the redirect interceptor carries a record\'s headers to the next hop', async () => {
    const origin = await server();
    const agent = cleanup.add(new Agent());
    const d = agent.compose(interceptors.redirect({ maxRedirections: 1 }));
    const text = await polluted(async () => {
      const res = await d.request({ origin, path: '/redirect', method: 'GET', headers: { 'X-Custom': 'ok' } });
      return res.body.text();
    });
    expect(text).toBe('x-custom=ok');
  });

  it('the dns interceptor keeps a record\'s headers when it adds host', async () => {
    const origin = await server();
    const agent = cleanup.add(new Agent());
    const d = agent.compose(interceptors.dns({ lookup: (_o, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) }));
    const text = await polluted(async () => {
      const res = await d.request({ origin: origin.replace('127.0.0.1', 'localhost'), path: '/', method: 'GET', headers: { 'X-Custom': 'ok' } });
      return res.body.text();
    });
    expect(text).toBe('x-custom=ok');
  });

  it('a MockAgent matches on a record\'s headers', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    cleanup.defer(() => agent.close());
    agent.get('http://localhost:3000').intercept({ path: '/h', headers: { 'x-custom': 'ok' } }).reply(200, 'matched');
    const text = await polluted(async () => {
      const res = await agent.request({ origin: 'http://localhost:3000', path: '/h', method: 'GET', headers: { 'X-Custom': 'ok' } });
      return res.body.text();
    });
    expect(text).toBe('matched');
  });

  it('an own iterator and a Map are still iterated', async () => {
    const origin = await server();
    const client = cleanup.add(new Client(origin));
    const texts = await polluted(async () => {
      const own = {
        *[Symbol.iterator]() {
          yield ['x-custom', 'own'];
        },
      } as Iterable<[string, string]>;
      const a = await client.request({ path: '/', method: 'GET', headers: own });
      const b = await client.request({ path: '/', method: 'GET', headers: new Map([['x-custom', 'map']]) });
      return [await a.body.text(), await b.body.text()];
    });
    expect(texts).toEqual(['x-custom=own', 'x-custom=map']);
  });
});
