// BalancedPool as undici's: the order its weighted round-robin picks upstreams in (undici's
// node-test weighted cases, with upstreams that refuse connections or hang up for a while, told
// apart by the error's port as undici's test does), getUpstream, the
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
 * so far, and hangs up on a request when it has answered `hangUpOn`, counting failed ones, as
 * undici's test server does; `port` stays the same throughout.
 */
class Upstream {
  readonly #server: Server;
  port = 0;
  requests = 0;

  constructor(
    readonly name: string,
    readonly downOn: number[],
    readonly hangUpOn: number[],
    log: string[],
  ) {
    this.#server = createServer((req, res) => {
      if (this.hangUpOn.includes(this.requests)) return void req.destroy();
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

/** The port of the upstream a request failed on: a SocketError's connection, a connect error's port. */
function errorPort(err: unknown): number | undefined {
  const e = err as { socket?: { remotePort?: number } | null; port?: number };
  return e.socket?.remotePort ?? e.port;
}

interface Case {
  errorPenalty: number;
  downOn: number[][];
  hangUpOn?: number[][];
  /** GET unless said: ferro re-sends an idempotent request its reused connection dropped. */
  method?: 'POST';
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
  // POST: a GET would be re-sent on a new connection (docs/compatibility.md), not fail.
  'one hangs up on its second request': {
    errorPenalty: 15,
    downOn: [[], [], []],
    hangUpOn: [[1], [], []],
    method: 'POST',
    expected: ['A', 'B', 'C', 'A/socketError', 'B', 'C', 'B', 'C', 'B', 'C', 'A'],
    ratios: [0.32, 0.34, 0.34],
  },
  'all healthy, five upstreams': {
    errorPenalty: 7,
    downOn: [[], [], [], [], []],
    expected: ['A', 'B', 'C', 'D', 'E', 'A', 'B', 'C', 'D', 'E'],
    ratios: [0.2, 0.2, 0.2, 0.2, 0.2],
  },
  'one refuses four times': {
    errorPenalty: 15,
    downOn: [[0, 1, 2, 3], [], []],
    expected: ['A/refused', 'B', 'C', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'B', 'C', 'A/refused', 'B', 'C', 'A', 'B', 'C', 'A', 'B', 'C'],
    ratios: [0.18, 0.41, 0.41],
  },
};

describe('BalancedPool: weighted round-robin in undici order', () => {
  for (const [name, { errorPenalty, downOn, hangUpOn, method = 'GET', expected, ratios }] of Object.entries(cases)) {
    it(name, async () => {
      const log: string[] = [];
      const upstreams = downOn.map((down, i) => new Upstream('ABCDE'[i]!, down, hangUpOn?.[i] ?? [], log));
      cleanup.add({ close: () => Promise.all(upstreams.map((u) => u.stop())) });
      // Every upstream listens once first, so each has its port for good.
      await Promise.all(upstreams.map((u) => u.start()));
      const bp = cleanup.add(new BalancedPool(upstreams.map((u) => u.origin), { maxWeightPerServer: 100, errorPenalty }));
      for (let i = 0; i < 100; i++) {
        await Promise.all(upstreams.map((u) => u.prepare()));
        try {
          await (await bp.request({ path: '/', method })).body.text();
        } catch (err) {
          // The failed upstream, by the error's port, as undici's test finds it.
          const u = upstreams.find((up) => up.port === errorPort(err));
          if (u === undefined) throw err;
          u.requests++;
          const { code } = err as NodeJS.ErrnoException;
          if (code === 'ECONNREFUSED') log.push(`${u.name}/refused`);
          else if (code === 'UND_ERR_SOCKET') log.push(`${u.name}/socketError`);
          else throw err;
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
