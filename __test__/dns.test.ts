// interceptors.dns against real local servers: counting lookups, TTL expiry, affinity, dual-stack
// fallback, custom pick and storage, per-request overrides, lookup errors, and the engine's own
// resolver (getaddrinfo off the JS thread, one cache for the process).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Agent, errors, interceptors } from '../ts/index.js';
import type { Dispatcher, DNSInterceptorOptions, DNSInterceptorOriginRecords, DNSInterceptorRecord, DNSStorage } from '../ts/index.js';
import { engineLookupMisses } from '../ts/native/resolver.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanup.length) await cleanup.pop()!();
});

interface Seen {
  host: string | undefined;
  remote: string | undefined;
}

/** An http server on `address` answering with what it saw; `port` 0 picks one. */
async function serveOn(address: string, port = 0): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ host: req.headers.host, remote: req.socket.remoteAddress });
    res.end(`hello from ${address}`);
  });
  server.listen(port, address);
  await once(server, 'listening');
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  server.on('connection', (s) => cleanup.push(() => void s.destroy()));
  return { port: (server.address() as AddressInfo).port, seen };
}

function composed(opts?: DNSInterceptorOptions): Dispatcher {
  const agent = new Agent();
  cleanup.push(() => agent.destroy());
  return agent.compose(interceptors.dns(opts));
}

/** A lookup answering `records` and counting its calls. */
function counting(records: DNSInterceptorRecord[]): { lookup: NonNullable<DNSInterceptorOptions['lookup']>; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lookup: (origin, _opts, cb) => {
      // undici hands a custom lookup the origin as a URL, not the bare host name.
      expect(origin).toBeInstanceOf(URL);
      calls.push(origin.hostname);
      setImmediate(() => cb(null, records.map((r) => ({ ...r }))));
    },
  };
}

async function get(d: Dispatcher, origin: string, extra: object = {}): Promise<string> {
  const res = await d.request({ origin, path: '/', method: 'GET', ...extra });
  return res.body.text();
}

describe('caching', () => {
  it('looks a name up once and serves later requests from the cache', async () => {
    const srv = await serveOn('127.0.0.1');
    const { lookup, calls } = counting([{ address: '127.0.0.1', family: 4 }]);
    const d = composed({ lookup });
    const origin = `http://fake.test:${srv.port}`;
    for (let i = 0; i < 3; i++) expect(await get(d, origin)).toBe('hello from 127.0.0.1');
    expect(calls).toEqual(['fake.test']);
    // The connection went to the address; the Host header kept the name.
    expect(srv.seen.map((s) => s.host)).toEqual(Array(3).fill(`fake.test:${srv.port}`));
  });

  it('looks up again once the records expire (maxTTL)', async () => {
    const srv = await serveOn('127.0.0.1');
    const { lookup, calls } = counting([{ address: '127.0.0.1', family: 4 }]);
    const d = composed({ lookup, maxTTL: 1000 });
    const origin = `http://fake.test:${srv.port}`;
    await get(d, origin);
    await get(d, origin);
    expect(calls.length).toBe(1);
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 1001 + 5000);
    await get(d, origin);
    expect(calls.length).toBe(2);
  });

  it('a record ttl shorter than maxTTL wins', async () => {
    const srv = await serveOn('127.0.0.1');
    const { lookup, calls } = counting([{ address: '127.0.0.1', family: 4, ttl: 50 }]);
    const d = composed({ lookup });
    const origin = `http://fake.test:${srv.port}`;
    await get(d, origin);
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 100);
    await get(d, origin);
    expect(calls.length).toBe(2);
  });

  it('requests to IP literals and without origin skip the lookup', async () => {
    const srv = await serveOn('127.0.0.1');
    const { lookup, calls } = counting([]);
    const d = composed({ lookup });
    expect(await get(d, `http://127.0.0.1:${srv.port}`)).toBe('hello from 127.0.0.1');
    expect(calls).toEqual([]);
  });
});

describe('families', () => {
  const both: DNSInterceptorRecord[] = [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ];

  it('affinity picks the family when dualStack is false', async () => {
    const v4 = await serveOn('127.0.0.1');
    const v6 = await serveOn('::1', v4.port).catch(() => null);
    if (v6 === null) return expect.fail('IPv6 loopback is needed for this test');
    const origin = `http://fake.test:${v4.port}`;
    expect(await get(composed({ lookup: counting(both).lookup, dualStack: false, affinity: 6 }), origin)).toBe('hello from ::1');
    expect(await get(composed({ lookup: counting(both).lookup, dualStack: false, affinity: 4 }), origin)).toBe('hello from 127.0.0.1');
    // Without dualStack the default affinity is 4.
    expect(await get(composed({ lookup: counting(both).lookup, dualStack: false }), origin)).toBe('hello from 127.0.0.1');
    expect(v6.seen[0]!.host).toBe(`fake.test:${v4.port}`);
  });

  it("a custom lookup is told the family to resolve, as dns.lookup's options say it", async () => {
    const srv = await serveOn('127.0.0.1');
    const origin = `http://fake.test:${srv.port}`;
    const families: unknown[] = [];
    const lookup: NonNullable<DNSInterceptorOptions['lookup']> = (_origin, options, cb) => {
      families.push(options.family);
      cb(null, [{ address: '127.0.0.1', family: 4 }]);
    };
    await get(composed({ lookup }), origin);
    await get(composed({ lookup, dualStack: false }), origin);
    await get(composed({ lookup, dualStack: false, affinity: 4 }), origin);
    expect(families).toEqual([0, 4, 4]);
  });

  it('only the other family with dualStack off is "no entries"', async () => {
    const d = composed({ lookup: counting([{ address: '::1', family: 6 }]).lookup, dualStack: false, affinity: 4 });
    const err = await get(d, 'http://fake.test:1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.InformationalError);
    expect((err as Error).message).toBe('No DNS entries found');
  });

  it('dual stack falls back to the other family when an address refuses', async () => {
    // Only ::1 listens; 127.0.0.1 on the same port refuses, and the default pick tries v4 first.
    const v6 = await serveOn('::1');
    const { lookup } = counting(both);
    const d = composed({ lookup });
    expect(await get(d, `http://fake.test:${v6.port}`)).toBe('hello from ::1');
  });

  it('a refused address with dualStack off is the request error', async () => {
    const v6 = await serveOn('::1');
    const d = composed({ lookup: counting(both).lookup, dualStack: false, affinity: 4 });
    const err = await get(d, `http://fake.test:${v6.port}`).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
  });
});

describe('custom pick, storage and per-request options', () => {
  it('pick chooses the record', async () => {
    const srv = await serveOn('127.0.0.1');
    const seen: [string, DNSInterceptorOriginRecords, 4 | 6 | null][] = [];
    const d = composed({
      lookup: counting([
        { address: '127.0.0.9', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]).lookup,
      pick: (origin, records, affinity) => {
        seen.push([origin.hostname, records, affinity as 4 | 6 | null]);
        return records.records[4]!.ips[1]!;
      },
    });
    expect(await get(d, `http://fake.test:${srv.port}`)).toBe('hello from 127.0.0.1');
    expect(seen[0]![0]).toBe('fake.test');
    expect(seen[0]![1].records[4]!.ips.map((r) => r.address)).toEqual(['127.0.0.9', '127.0.0.1']);
    expect(seen[0]![2]).toBeNull();
  });

  it('storage holds the records; when full, lookups are skipped and nothing is stored', async () => {
    const srv = await serveOn('127.0.0.1');
    const map = new Map<string, DNSInterceptorOriginRecords>();
    const sets: [string, number][] = [];
    let full = false;
    const storage: DNSStorage = {
      get size() {
        return map.size;
      },
      get: (o) => map.get(o) ?? null,
      set: (o, r, { ttl }) => {
        sets.push([o, ttl]);
        if (r) map.set(o, r);
      },
      delete: (o) => void map.delete(o),
      full: () => full,
    };
    const { lookup, calls } = counting([{ address: '127.0.0.1', family: 4 }]);
    const d = composed({ lookup, storage, maxTTL: 5000 });
    await get(d, `http://fake.test:${srv.port}`);
    await get(d, `http://fake.test:${srv.port}`);
    expect(calls).toEqual(['fake.test']);
    expect(sets).toEqual([['fake.test', 5000]]);
    full = true;
    // A new name while full: no lookup, the request goes to the name (the engine resolves it).
    expect(await get(d, `http://localhost:${srv.port}`)).toBe('hello from 127.0.0.1');
    expect(calls).toEqual(['fake.test']);
    expect(map.has('localhost')).toBe(false);
  });

  it('a storage answering undefined for a name it lacks is a miss, not a crash', async () => {
    const srv = await serveOn('127.0.0.1');
    const map = new Map<string, DNSInterceptorOriginRecords>();
    const storage: DNSStorage = {
      get size() {
        return map.size;
      },
      get: (o) => map.get(o),
      set: (o, r) => void (r && map.set(o, r)),
      delete: (o) => void map.delete(o),
      full: () => false,
    };
    const { lookup, calls } = counting([{ address: '127.0.0.1', family: 4 }]);
    const d = composed({ lookup, storage });
    expect(await get(d, `http://fake.test:${srv.port}`)).toBe('hello from 127.0.0.1');
    expect(calls).toEqual(['fake.test']);
  });

  it('the same address on different ports is two records, each picked in turn', async () => {
    const a = await serveOn('127.0.0.1');
    const b = await serveOn('127.0.0.1');
    const { lookup } = counting([
      { address: '127.0.0.1', family: 4, port: a.port },
      { address: '127.0.0.1', family: 4, port: b.port },
    ]);
    const d = composed({ lookup });
    for (let i = 0; i < 4; i++) await get(d, 'http://fake.test');
    expect([a.seen.length, b.seen.length]).toEqual([2, 2]);
  });

  it('per-request dns options override the interceptor', async () => {
    const srv = await serveOn('127.0.0.1');
    const base = counting([{ address: '127.0.0.9', family: 4 }]);
    const mine = counting([{ address: '127.0.0.1', family: 4 }]);
    const d = composed({ lookup: base.lookup });
    expect(await get(d, `http://fake.test:${srv.port}`, { dns: { lookup: mine.lookup } })).toBe('hello from 127.0.0.1');
    expect(base.calls).toEqual([]);
    expect(mine.calls).toEqual(['fake.test']);
  });
});

describe('TLS', () => {
  it('verifies and sends SNI for the name while connecting to the picked address', async () => {
    const tls = (name: string): string => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url), 'utf8');
    let sni: string | undefined;
    const server = createHttpsServer({ cert: tls('other.pem'), key: tls('other.key') }, (req, res) => {
      sni = (req.socket as import('node:tls').TLSSocket).servername || undefined;
      res.end(`secure ${req.headers.host}`);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
    server.on('secureConnection', (s) => cleanup.push(() => void s.destroy()));
    const port = (server.address() as AddressInfo).port;
    const agent = new Agent({ connect: { ca: tls('ca.pem') } });
    cleanup.push(() => agent.destroy());
    // other.pem names only other.test: verifying 127.0.0.1 instead would fail.
    const d = agent.compose(interceptors.dns({ lookup: counting([{ address: '127.0.0.1', family: 4 }]).lookup }));
    expect(await get(d, `https://other.test:${port}`)).toBe(`secure other.test:${port}`);
    expect(sni).toBe('other.test');
  });
});

describe('per-request family options', () => {
  it('dns.affinity and dns.dualStack on the request pick the family', async () => {
    const v4 = await serveOn('127.0.0.1');
    const v6 = await serveOn('::1', v4.port);
    const records: DNSInterceptorRecord[] = [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
    const d = composed({ lookup: counting(records).lookup, dualStack: false, affinity: 4 });
    const origin = `http://fake.test:${v4.port}`;
    expect(await get(d, origin, { dns: { affinity: 6 } })).toBe('hello from ::1');
    expect(await get(d, origin)).toBe('hello from 127.0.0.1');
    expect(v6.seen.length).toBe(1);
  });
});

describe('errors', () => {
  it('a lookup error reaches the request', async () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND fake.test'), { code: 'ENOTFOUND' });
    const d = composed({ lookup: (_h, _o, cb) => setImmediate(() => cb(failure, [])) });
    await expect(get(d, 'http://fake.test:1')).rejects.toBe(failure);
  });

  it('an empty answer is InformationalError', async () => {
    const d = composed({ lookup: counting([]).lookup });
    const err = await get(d, 'http://fake.test:1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.InformationalError);
  });

  it('bad options are InvalidArgumentError', () => {
    const bad = [{ maxTTL: -1 }, { maxItems: 0 }, { affinity: 5 }, { dualStack: 'yes' }, { lookup: 1 }, { pick: {} }, { storage: {} }];
    for (const opts of bad) expect(() => interceptors.dns(opts as never)).toThrow(errors.InvalidArgumentError);
  });
});

describe('the engine resolver', () => {
  it('resolves names off the JS thread and caches them for the process', async () => {
    const srv = await serveOn('127.0.0.1');
    const d = composed();
    const origin = `http://localhost:${srv.port}`;
    expect(await get(d, origin)).toBe('hello from 127.0.0.1');
    const misses = engineLookupMisses();
    // Another interceptor instance (empty storage) still hits the engine's cache.
    expect(await get(composed(), origin)).toBe('hello from 127.0.0.1');
    expect(engineLookupMisses()).toBe(misses);
    expect(srv.seen.every((s) => s.host === `localhost:${srv.port}`)).toBe(true);
  });

  it('maxTTL 0 asks the system every time', async () => {
    const srv = await serveOn('127.0.0.1');
    const d = composed({ maxTTL: 0 });
    const origin = `http://localhost:${srv.port}`;
    await get(d, origin);
    const misses = engineLookupMisses();
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 10);
    await get(d, origin);
    expect(engineLookupMisses()).toBe(misses + 1);
  });

  it('maxTTL 0: a fresh answer serves its request even if the clock ticks while it is stored', async () => {
    const srv = await serveOn('127.0.0.1');
    const d = composed({ maxTTL: 0 });
    // Every read of the clock is a millisecond later: the answer is "old" by the time it is picked.
    let t = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => ++t);
    expect(await get(d, `http://localhost:${srv.port}`)).toMatch(/./);
  });

  it('an unknown name fails with ENOTFOUND', async () => {
    const err = await get(composed(), 'http://does-not-exist.invalid:1').catch((e: unknown) => e);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((err as { code?: string }).code);
    expect((err as { hostname?: string }).hostname).toBe('does-not-exist.invalid');
  });

  it('a plain dispatcher fails an unknown name with ENOTFOUND, as Node\'s connect does', async () => {
    const agent = new Agent();
    cleanup.push(() => agent.destroy());
    const err = await get(agent, 'http://does-not-exist.invalid:1').catch((e: unknown) => e);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((err as { code?: string }).code);
  });

  it('a plain dispatcher reaches a name through the engine resolver too', async () => {
    const srv = await serveOn('127.0.0.1');
    const agent = new Agent();
    cleanup.push(() => agent.destroy());
    expect(await get(agent, `http://localhost:${srv.port}`)).toBe('hello from 127.0.0.1');
  });
});
