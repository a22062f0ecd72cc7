// Handler hooks as undici fires them (issue 11, item 4): onBodySent for buffered bodies,
// onRequestSent, onResponseStarted, and a throwing hook failing the request with its error —
// on a real Client and on MockAgent replies.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, MockAgent } from '../ts/index.js';
import type { DispatchHandler, Dispatcher } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const HOOKS = [
  'onRequestStart',
  'onBodySent',
  'onRequestSent',
  'onResponseStarted',
  'onResponseStart',
  'onResponseData',
  'onResponseEnd',
  'onResponseError',
] as const;

/** Dispatches and resolves with the hooks called, in order; `thrower` throws `Error(thrower)`. */
function trace(d: Dispatcher, origin: string, body: string | Buffer | null, thrower?: string): Promise<string[]> {
  return new Promise((resolve) => {
    const log: string[] = [];
    const handler: Record<string, unknown> = {};
    for (const hook of HOOKS) {
      handler[hook] = (...args: unknown[]) => {
        if (hook === 'onBodySent') {
          const chunk = args[0];
          log.push(`onBodySent:${Buffer.isBuffer(chunk) ? 'buffer' : typeof chunk}:${String(chunk)}`);
        } else if (hook === 'onResponseError') {
          log.push(`onResponseError:${(args[1] as Error).message}`);
        } else log.push(hook);
        if (hook === thrower) throw new Error(hook);
        if (hook === 'onResponseError' || (hook === 'onResponseEnd' && thrower !== hook)) resolve(log);
      };
    }
    d.dispatch({ origin, path: '/', method: 'POST', body }, handler as DispatchHandler);
  });
}

async function server(): Promise<string> {
  const srv = cleanup.add(await httpServer((req, res) => req.resume().on('end', () => res.end('hi'))));
  return srv.origin;
}

describe('a real Client', () => {
  it('fires every hook undici fires, in order, for string, Buffer and no bodies', async () => {
    const origin = await server();
    const client = cleanup.add(new Client(origin));
    const tail = ['onRequestSent', 'onResponseStarted', 'onResponseStart', 'onResponseData', 'onResponseEnd'];
    expect(await trace(client, origin, 'str')).toEqual(['onRequestStart', 'onBodySent:buffer:str', ...tail]);
    expect(await trace(client, origin, Buffer.from('buf'))).toEqual(['onRequestStart', 'onBodySent:buffer:buf', ...tail]);
    expect(await trace(client, origin, null)).toEqual(['onRequestStart', ...tail]);
  });

  for (const thrower of ['onBodySent', 'onRequestSent', 'onResponseStarted', 'onResponseStart', 'onResponseData', 'onResponseEnd']) {
    it(`a throw in ${thrower} fails the request with that error`, async () => {
      const origin = await server();
      const client = cleanup.add(new Client(origin));
      const log = await trace(client, origin, 'str', thrower);
      expect(log.at(-1)).toBe(`onResponseError:${thrower}`);
      expect(log.filter((h) => h.startsWith('onResponseError'))).toHaveLength(1);
    });
  }
});

describe('MockAgent replies', () => {
  function mocked(): { agent: MockAgent; origin: string } {
    const origin = 'http://mocked.test';
    const agent = cleanup.add(new MockAgent());
    agent.disableNetConnect();
    agent.get(origin).intercept({ path: '/', method: 'POST' }).reply(200, 'hi').persist();
    return { agent, origin };
  }

  it('fire onBodySent with the body as given, then onRequestSent', async () => {
    const { agent, origin } = mocked();
    const tail = ['onRequestSent', 'onResponseStart', 'onResponseData', 'onResponseEnd'];
    expect(await trace(agent, origin, 'str')).toEqual(['onRequestStart', 'onBodySent:string:str', ...tail]);
    expect(await trace(agent, origin, null)).toEqual(['onRequestStart', ...tail]);
  });

  for (const thrower of ['onRequestStart', 'onBodySent', 'onRequestSent', 'onResponseStart']) {
    it(`a throw in ${thrower} fails the request with that error, and nothing follows`, async () => {
      const { agent, origin } = mocked();
      const log = await trace(agent, origin, 'str', thrower);
      expect(log.at(-1)).toBe(`onResponseError:${thrower}`);
      expect(log.findIndex((h) => h.startsWith(thrower))).toBe(log.length - 2);
    });
  }
});
