// Client options and members undici declares (issue 29): autoSelectFamily /
// autoSelectFamilyAttemptTimeout (the engine always races address families; turning it off or
// timing it takes Node's sockets, which get the options), the connector's localPort, the
// `pipelining` getter, and the option checks.
import { afterEach, describe, expect, it, vi } from 'vitest';
import netCjs from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { Client, buildConnector, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';
import { httpServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** The options of every net.connect made while the test runs (the engine's own sockets make none). */
function watchNetConnect(): unknown[] {
  const seen: unknown[] = [];
  const original = netCjs.connect;
  const spy = vi.spyOn(netCjs, 'connect').mockImplementation(((...args: Parameters<typeof original>) => {
    seen.push(args[0]);
    return original(...args);
  }) as typeof original);
  // `import * as net` (ts/core/connector.ts) sees the spy only once the ES exports are synced.
  syncBuiltinESMExports();
  cleanup.defer(async () => {
    spy.mockRestore();
    syncBuiltinESMExports();
  });
  return seen;
}

async function served(): Promise<string> {
  const s = cleanup.add(await httpServer((req, res) => res.end(`${req.socket.remotePort}`)));
  return s.origin;
}

async function get(c: Client): Promise<string> {
  const res = await c.request({ path: '/', method: 'GET' });
  return res.body.text();
}

describe('autoSelectFamily', () => {
  it('false connects through Node with autoSelectFamily: false', async () => {
    const origin = await served();
    const seen = watchNetConnect();
    const c = cleanup.add(new Client(origin, { autoSelectFamily: false }));
    expect(await get(c)).toMatch(/^\d+$/);
    expect(seen).toEqual([expect.objectContaining({ autoSelectFamily: false, host: '127.0.0.1' })]);
  });

  it('an attempt timeout connects through Node with it (and autoSelectFamily on)', async () => {
    const origin = await served();
    const seen = watchNetConnect();
    const c = cleanup.add(new Client(origin, { autoSelectFamilyAttemptTimeout: 500 }));
    expect(await get(c)).toMatch(/^\d+$/);
    expect(seen).toEqual([expect.objectContaining({ autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 500 })]);
  });

  it('true is what the engine does already: its own sockets', async () => {
    const origin = await served();
    const seen = watchNetConnect();
    const c = cleanup.add(new Client(origin, { autoSelectFamily: true }));
    expect(await get(c)).toMatch(/^\d+$/);
    expect(seen).toEqual([]);
  });

  it('bad values are InvalidArgumentError (undici words for the timeout)', () => {
    expect(() => new Client('http://127.0.0.1:1', { autoSelectFamily: 'yes' as unknown as boolean })).toThrow(
      new errors.InvalidArgumentError('autoSelectFamily must be a boolean'),
    );
    expect(() => new Client('http://127.0.0.1:1', { autoSelectFamilyAttemptTimeout: 1.5 })).toThrow(
      new errors.InvalidArgumentError('autoSelectFamilyAttemptTimeout must be a positive number'),
    );
  });
});

describe('localPort', () => {
  it('binds the local port, through buildConnector or a Client connect option', async () => {
    const origin = await served();
    const free = async (): Promise<number> => {
      const probe = netCjs.createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => probe.once('listening', resolve));
      const { port } = probe.address() as netCjs.AddressInfo;
      await new Promise((resolve) => probe.close(resolve));
      return port;
    };
    const viaConnector = await free();
    const a = cleanup.add(new Client(origin, { connect: buildConnector({ localPort: viaConnector }) }));
    expect(await get(a)).toBe(String(viaConnector));
    const viaOptions = await free();
    const b = cleanup.add(new Client(origin, { connect: { localPort: viaOptions } }));
    expect(await get(b)).toBe(String(viaOptions));
  });
});

describe('pipelining', () => {
  it('reads the option (1 by default, 0 for keep-alive off)', () => {
    const make = (pipelining?: number): Client => cleanup.add(new Client('http://127.0.0.1:1', pipelining === undefined ? {} : { pipelining }));
    expect([make().pipelining, make(4).pipelining, make(0).pipelining]).toEqual([1, 4, 0]);
  });

  it('cannot be changed afterwards: NotSupportedError, even from sloppy-mode code', () => {
    const c = cleanup.add(new Client('http://127.0.0.1:1'));
    expect(() => Reflect.set(c, 'pipelining', 2)).toThrow(
      new errors.NotSupportedError('pipelining is fixed when the Client is made; pass it to the constructor'),
    );
    expect(c.pipelining).toBe(1);
  });
});
