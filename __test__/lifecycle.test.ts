// The engine's life cycle: one engine per JS environment (two worker threads at once, each torn
// down when its worker exits), many Clients created and closed without leaking, and a process
// that exits on its own with only idle kept-alive sockets. The worker and child scripts run the
// compiled package (dist/, built by `npm test`'s pretest).
import { describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Client } from '../ts/index.js';
import { engineCounts } from '../ts/native/engine.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { engineThreadCount } from './fixtures/engine-threads.js';

const cleanup = useCleanup();
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/workers/${name}`, import.meta.url));
const built = existsSync(fileURLToPath(new URL('../dist/index.js', import.meta.url)));
/** This process's open file descriptors (sockets among them), where /proc tells. */
const openFds = (): number | null => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : null);

async function echoServer(): Promise<string> {
  const srv = cleanup.track(await httpServer((req, res) => res.end(`got ${req.url}`)));
  return srv.origin;
}

describe.skipIf(!built)('worker threads', () => {
  it('two workers each run their own engine at once; each is torn down when its worker exits', async () => {
    const origin = await echoServer();
    const before = engineThreadCount();
    const run = async (tag: string): Promise<string[]> => {
      const worker = new Worker(fixture('requests.mjs'), { workerData: { origin, count: 40, tag } });
      // Listening for 'exit' from the start: it can follow 'message' within the same turn.
      const exited = once(worker, 'exit');
      const [bodies] = (await once(worker, 'message')) as [string[]];
      const [code] = await exited;
      expect(code).toBe(0);
      return bodies;
    };
    const [a, b] = await Promise.all([run('a'), run('b')]);
    expect(a).toEqual(Array.from({ length: 40 }, (_, i) => `got /a/${i}`));
    expect(b).toEqual(Array.from({ length: 40 }, (_, i) => `got /b/${i}`));
    // The engines' runtime threads go away with their workers (each ends just after its stop).
    if (before !== null) await vi.waitFor(() => expect(engineThreadCount()).toBe(before), { timeout: 5_000 });
    // This thread's engine is untouched by the workers' teardown.
    const client = cleanup.track(new Client(origin));
    expect(await (await client.request({ path: '/main', method: 'GET' })).body.text()).toBe('got /main');
  });
});

describe('many clients', () => {
  it('1,000 Clients created, used and closed leave nothing behind', async () => {
    const { server, origin } = cleanup.track(await httpServer((req, res) => res.end(`got ${req.url}`)));
    const none = { jsRequests: 0, jsPools: 0, requests: 0, connections: 0 };
    // Nothing open: no request, pool or connection in the engine, every socket closed at both
    // ends (the server's end closes when it reads the client's FIN), and no more descriptors.
    const settled = async (fds: number | null): Promise<number | null> => {
      await vi.waitFor(() => expect(engineCounts()).toEqual(none), { timeout: 5_000 });
      await vi.waitFor(async () => expect(await new Promise((r) => server.getConnections((_, n) => r(n)))).toBe(0), { timeout: 5_000 });
      // At most as many as before: a socket of an earlier test may still have been closing then.
      if (fds !== null) await vi.waitFor(() => expect(openFds()).toBeLessThanOrEqual(fds), { timeout: 5_000 });
      return openFds();
    };
    const use = async (client: Client, path: string): Promise<void> => {
      const { body } = await client.request({ path, method: 'GET' });
      expect(await body.text()).toBe(`got ${path}`);
      await client.close();
    };
    // The engine's own descriptors (its reactor's) open with its first connection and stay.
    await use(new Client(origin), '/first');
    const fds = await settled(null);
    // 50 at a time. One at a time, every exchange pays its own wake-ups (about 1.1 ms of CPU)
    // and waits its own turns on a busy machine's scheduler: 1.0-1.6 s idle, up to 10 s under
    // load on 2 cores. In waves the wake-ups are shared: half the CPU, a third of the time.
    const WAVE = 50;
    for (let wave = 0; wave < 1000; wave += WAVE) {
      await Promise.all(Array.from({ length: WAVE }, (_, j) => use(new Client(origin), `/${wave + j}`)));
    }
    await settled(fds);
  });
});

describe.skipIf(!built)('process exit', () => {
  async function runChild(origin: string, mode: string): Promise<{ code: number | null; out: string; ms: number }> {
    const start = Date.now();
    const child = spawn(process.execPath, [fixture('idle-exit.mjs'), origin, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, out, ms: Date.now() - start };
  }

  it('exits on its own when only idle kept-alive sockets remain', async () => {
    // The server keeps sockets open far longer than the test: only the client can let go.
    const origin = await echoServer();
    const { code, out, ms } = await runChild(origin, 'idle');
    expect(out).toBe('got /\n');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  });

  it('close() leaves no request, connection or pool behind in the engine', async () => {
    const origin = await echoServer();
    const { code, out } = await runChild(origin, 'close');
    const [text, counts] = out.trim().split('\n');
    expect(text).toBe('got /');
    expect(JSON.parse(counts!)).toEqual({ jsRequests: 0, jsPools: 0, requests: 0, connections: 0 });
    expect(code).toBe(0);
  });
});
