// The inline driver's wait for a reply awake (src/inline/busy_poll.rs): while requests are in
// flight, the loop polls for up to FERRO_BUSY_POLL_US (default 15 µs) before it sleeps, and backs
// off from a server whose replies do not come that fast. Whether a reply from another process
// lands in time depends on the machine's scheduling: bench/alternate.mjs measures that; these
// tests pin what does not.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client } from '../ts/index.js';
import { engineBusyPoll } from '../ts/native/engine.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';

const cleanup = useCleanup();
const runChild = useChildRuns();

/** A node:http server in a child process answering every request after `delayMs`. */
async function childServer(delayMs: number): Promise<string> {
  const script = `
    const http = await import('node:http');
    const delay = ${delayMs};
    const srv = http.createServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('ok'), delay);
    });
    srv.listen(0, '127.0.0.1', () => process.stdout.write(String(srv.address().port) + '\\n'));
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  // Closing its stdin ends it: it goes with this test file's process whatever happens.
  cleanup.push(async () => {
    child.stdin.end();
    if (child.exitCode === null) await once(child, 'exit');
  });
  const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string];
  return `http://127.0.0.1:${line.trim()}`;
}

async function serial(origin: string, n: number): Promise<[number, number]> {
  const client = cleanup.track(new Client(origin, { engine: 'inline' }));
  const before = engineBusyPoll('inline') ?? [0, 0];
  for (let i = 0; i < n; i++) {
    const { statusCode, body } = await client.request({ path: '/', method: 'GET' });
    expect(statusCode).toBe(200);
    expect(await body.text()).toBe('ok');
  }
  const after = engineBusyPoll('inline') ?? [0, 0];
  return [after[0] - before[0], after[1] - before[1]];
}

describe.skipIf(process.platform !== 'linux')('waiting for a reply awake (inline driver)', () => {
  it('ends the wait as soon as the loop has anything to do', async () => {
    // A server in this process: each request lands in its socket as it is written (loopback), so
    // every wait finds the loop's descriptor readable at once and never runs its budget out.
    const srv = cleanup.track(await httpServer((_req, res) => res.end('ok')));
    const [waits, woke] = await serial(srv.origin, 100);
    expect(waits).toBeGreaterThanOrEqual(100);
    expect(woke).toBe(waits);
  });

  it('backs off from a server whose replies take longer than the wait', async () => {
    // 25 requests of 20 ms: every wait runs out, so the waits thin out (1, 2, 4, … loop turns
    // skipped after each miss) instead of coming once per turn of the loop.
    const [waits] = await serial(await childServer(20), 25);
    expect(waits).toBeGreaterThan(0);
    expect(waits).toBeLessThanOrEqual(12);
  });

  it('FERRO_BUSY_POLL_US=0 turns it off; a value that is not valid warns and keeps the default', async () => {
    const srv = cleanup.track(await httpServer((_req, res) => res.end('ok')));
    const body = `
      const c = new ferro.Client(origin, { engine: 'inline' });
      await (await c.request({ path: '/', method: 'GET' })).body.text();
      const { engineBusyPoll } = await import(new URL('./native/engine.js', process.env.FERRO_LIB).href);
      process.stdout.write(JSON.stringify(engineBusyPoll('inline')));
      await c.close();`;
    const off = await runChild(undefined, srv.origin, body, { FERRO_BUSY_POLL_US: '0' });
    expect(off.stdout).toBe('null');
    const bad = await runChild(undefined, srv.origin, body, { FERRO_BUSY_POLL_US: 'fast' });
    expect(JSON.parse(bad.stdout)).toHaveLength(2);
    expect(bad.stderr).toContain('FERRO_BUSY_POLL_US="fast" is not an integer from 0 to 1000; using the default');
  });
});
