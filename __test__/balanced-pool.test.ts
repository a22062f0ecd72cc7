// BalancedPool as undici's: the order its weighted round-robin picks upstreams in (undici's
// node-test weighted cases, with upstreams that refuse connections for a while), getUpstream, the
// upstream list without closed members, and the pool destroyed once its close finished.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BalancedPool, Pool } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/**
 * An upstream that refuses connections (is not listening) while it has answered `downOn` requests
 * so far, counting refused ones, as undici's test server does; `port` stays the same throughout.
 */
class Upstream {
  readonly #server: Server;
  port = 0;
  requests = 0;

  constructor(
    readonly name: string,
    readonly downOn: number[],
    log: string[],
  ) {
    this.#server = createServer((_req, res) => {
      this.requests++;
      res.end('ok');
      log.push(name);
    });
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (on a new port the first time, then on the same one). */
  async start(): Promise<void> {
    this.#server.listen(this.port, '127.0.0.1');
    await once(this.#server, 'listening');
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** Up or down for the next request. */
  async prepare(): Promise<void> {
    const down = this.downOn.includes(this.requests);
    if (down && this.#server.listening) await this.stop();
    else if (!down && !this.#server.listening) await this.start();
  }

  async stop(): Promise<void> {
    if (!this.#server.listening) return;
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

interface Case {
  errorPenalty: number;
  downOn: number[][];
  expected: string[];
  ratios: number[];
}

// undici's test/node-test/balanced-pool.js cases (100 requests, maxWeightPerServer 100).
const cases: Record<string, Case> = {
  'all healthy, three upstreams': {
    errorPenalty: 7,
    downOn: [[], [], []],
    expected: ['A', 'B', 'C', 'A', 'B', 'C', 'A', 'B', 'C', 'A', 'B', 'C'],
    ratios: [0.34, 0.33, 0.33],
  },
  'the first refuses its first connection': {
    errorPenalty: 15,
    downOn: [[0], [], []],
    expected: ['A/refused', 'B', 'C', 'B', 'C', 'B', 'C', 'A', 'B', 'C', 'A'],
    ratios: [0.32, 0.34, 0.34],
  },
  'the second refuses its first connection': {
    errorPenalty: 15,
    downOn: [[], [0], []],
    expected: ['A', 'B/refused', 'C', 'A', 'C', 'A', 'C', 'A', 'B', 'C'],
    ratios: [0.34, 0.32, 0.34],
  },
  'two refuse their first connection': {
    errorPenalty: 15,
    downOn: [[], [0], [0]],
    expected: ['A', 'B/refused', 'C/refused', 'A', 'A', 'A', 'B', 'C'],
    ratios: [0.35, 0.33, 0.32],
  },
  'all refuse three times': {
    errorPenalty: 15,
    downOn: [
      [0, 1, 2],
      [0, 1, 2],
      [0, 1, 2],
    ],
    expected: ['A/refused', 'B/refused', 'C/refused', 'A/refused', 'B/refused', 'C/refused', 'A/refused', 'B/refused', 'C/refused', 'A', 'B', 'C', 'A', 'B', 'C'],
    ratios: [0.34, 0.33, 0.33],
  },
  'uneven failures': {
    errorPenalty: 15,
    downOn: [[0], [0, 1], [0]],
    expected: ['A/refused', 'B/refused', 'C/refused', 'A', 'B/refused', 'C', 'A', 'B', 'C', 'A', 'B', 'C', 'A', 'C', 'A', 'C', 'A', 'C', 'A', 'B'],
    ratios: [0.36, 0.29, 0.35],
  },
  'one refuses four times': {
    errorPenalty: 15,
    downOn: [[0, 1, 2, 3], [], []],
    expected: ['A/refused', 'B', 'C', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'A', 'B', 'C', 'A', 'B', 'C'],
    ratios: [0.18, 0.41, 0.41],
  },
};

describe('BalancedPool: weighted round-robin in undici order', () => {
  for (const [name, { errorPenalty, downOn, expected, ratios }] of Object.entries(cases)) {
    it(name, async () => {
      const log: string[] = [];
      const upstreams = downOn.map((down, i) => new Upstream('ABC'[i]!, down, log));
      cleanup.add({ close: () => Promise.all(upstreams.map((u) => u.stop())) });
      // Every upstream listens once first, so each has its port for good.
      await Promise.all(upstreams.map((u) => u.start()));
      const bp = cleanup.add(new BalancedPool(upstreams.map((u) => u.origin), { maxWeightPerServer: 100, errorPenalty }));
      // Which upstream refused: the pool's connectionError event names it (it may follow the
      // request's rejection).
      const refusals: Upstream[] = [];
      bp.on('connectionError', (origin: URL) => {
        refusals.push(upstreams.find((u) => u.origin === new URL(origin).origin)!);
      });
      for (let i = 0; i < 100; i++) {
        await Promise.all(upstreams.map((u) => u.prepare()));
        try {
          await (await bp.request({ path: '/', method: 'GET' })).body.text();
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
          if (refusals.length === 0) await once(bp, 'connectionError');
          const u = refusals.shift()!;
          u.requests++;
          log.push(`${u.name}/refused`);
        }
      }
      expect(log.slice(0, expected.length)).toEqual(expected);
      expect(upstreams.map((u) => u.requests / 100)).toEqual(ratios);
    });
  }
});

describe('BalancedPool: upstream dispatchers', () => {
  it('getUpstream hands out the Pool of an upstream, undefined for others and once it is destroyed', async () => {
    const bp = cleanup.add(new BalancedPool(['http://127.0.0.1:3001', 'http://127.0.0.1:3002']));
    const first: Pool | undefined = bp.getUpstream('http://127.0.0.1:3001');
    expect(first).toBeInstanceOf(Pool);
    expect(bp.getUpstream(new URL('http://127.0.0.1:3002'))).toBeInstanceOf(Pool);
    expect(bp.getUpstream('http://127.0.0.1:3002')).not.toBe(first);
    expect(bp.getUpstream('http://127.0.0.1:9999')).toBeUndefined();
    await first!.destroy();
    expect(bp.getUpstream('http://127.0.0.1:3001')).toBeUndefined();
    expect(bp.upstreams).toEqual(['http://127.0.0.1:3002']);
    // Added again, the upstream gets a new dispatcher.
    bp.addUpstream('http://127.0.0.1:3001');
    const again = bp.getUpstream('http://127.0.0.1:3001');
    expect(again).toBeInstanceOf(Pool);
    expect(again).not.toBe(first);
  });

  it('is destroyed once its close has finished', async () => {
    const bp = new BalancedPool('http://127.0.0.1:3001');
    expect([bp.closed, bp.destroyed]).toEqual([false, false]);
    const closing = bp.close();
    expect([bp.closed, bp.destroyed]).toEqual([true, false]);
    await closing;
    expect([bp.closed, bp.destroyed]).toEqual([true, true]);
  });
});
