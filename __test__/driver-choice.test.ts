// The engine driver and its thread count when the code does not choose (issue 33 item 5): the
// rules for a given number of CPUs, the FERRO_ENGINE / FERRO_ENGINE_THREADS overrides, and a bad
// value in either (a warning and the automatic choice, never a throw or a runaway thread count).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { availableParallelism } from 'node:os';
import { Client, errors } from '../ts/index.js';
import {
  busyPollMicros,
  defaultDriver,
  defaultThreads,
  engineKind,
  engineThreads,
  MAX_BUSY_POLL_US,
  MAX_ENGINE_THREADS,
  type Machine,
} from '../ts/native/driver-choice.js';
import { engineDriver } from '../ts/native/engine.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { engineThreadCount } from './fixtures/engine-threads.js';
import { useChildRuns } from './fixtures/child-run.js';

const cleanup = useCleanup();
const runChild = useChildRuns();
const linux = (cores: number): Machine => ({ platform: 'linux', cores });

/** Collects the process warnings emitted while `fn` runs. */
function warningsOf(fn: () => void): string[] {
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
  try {
    fn();
    return spy.mock.calls.map((c) => String(c[0]));
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the automatic choice', () => {
  it('is inline on Linux with one or two CPUs, threaded with more', () => {
    expect([1, 2, 3, 4, 64].map((n) => defaultDriver(linux(n)))).toEqual(['inline', 'inline', 'threaded', 'threaded', 'threaded']);
  });

  it('is threaded where there is no inline driver, whatever the CPUs', () => {
    for (const platform of ['darwin', 'win32'] as const) {
      expect(defaultDriver({ platform, cores: 1 })).toBe('threaded');
      expect(defaultDriver({ platform, cores: 16 })).toBe('threaded');
    }
  });

  it('gives the threaded driver one worker thread below eight CPUs, two from eight up', () => {
    expect([1, 2, 4, 7, 8, 16, 128].map((n) => defaultThreads(linux(n)))).toEqual([1, 1, 1, 1, 2, 2, 2]);
  });

  it('is what engineKind and engineThreads return without an override', () => {
    // `undefined` would read process.env, which the suite's driver runs set (FERRO_ENGINE=threaded).
    expect(engineKind(undefined, '', linux(2))).toBe('inline');
    expect(engineKind(undefined, '', linux(4))).toBe('threaded');
    expect(engineThreads(undefined, linux(2))).toBe(1);
    expect(engineThreads('', linux(12))).toBe(2);
  });
});

describe('the overrides', () => {
  it('FERRO_ENGINE names the driver, the engine option still wins', () => {
    expect(engineKind(undefined, 'threaded', linux(2))).toBe('threaded');
    expect(engineKind(undefined, 'inline', linux(16))).toBe('inline');
    expect(engineKind('inline', 'threaded', linux(16))).toBe('inline');
    expect(() => engineKind('fast', 'threaded', linux(2))).toThrow(errors.InvalidArgumentError);
  });

  it('FERRO_ENGINE_THREADS takes an integer from 1 to the maximum', () => {
    expect(engineThreads('1', linux(16))).toBe(1);
    expect(engineThreads('3', linux(2))).toBe(3);
    expect(engineThreads(' 4 ', linux(2))).toBe(4);
    expect(engineThreads(String(MAX_ENGINE_THREADS), linux(2))).toBe(MAX_ENGINE_THREADS);
  });

  it('a FERRO_ENGINE that is no driver warns once and uses the automatic driver', () => {
    const warnings = warningsOf(() => {
      expect(engineKind(undefined, 'fast-please', linux(2))).toBe('inline');
      expect(engineKind(undefined, 'fast-please', linux(8))).toBe('threaded');
    });
    expect(warnings).toEqual([`FERRO_ENGINE="fast-please" is not 'inline' or 'threaded'; using inline`]);
  });

  it.each(['0', '-1', '2.5', '1e3', 'two', '0x4', String(MAX_ENGINE_THREADS + 1), '4294967297'])(
    'FERRO_ENGINE_THREADS=%j warns and uses the automatic count',
    (value) => {
      const warnings = warningsOf(() => {
        expect(engineThreads(value, linux(2))).toBe(1);
        expect(engineThreads(value, linux(2))).toBe(1);
      });
      expect(warnings).toEqual([`FERRO_ENGINE_THREADS=${JSON.stringify(value)} is not an integer from 1 to ${MAX_ENGINE_THREADS}; using 1`]);
    },
  );
});

describe('FERRO_BUSY_POLL_US', () => {
  it('takes an integer from 0 (off) to the maximum; unset is the engine default', () => {
    expect([undefined, '', '0', '15', ' 40 ', String(MAX_BUSY_POLL_US)].map((v) => busyPollMicros(v))).toEqual([
      undefined,
      undefined,
      0,
      15,
      40,
      MAX_BUSY_POLL_US,
    ]);
  });

  it.each(['-1', '2.5', 'fast', '1e2', String(MAX_BUSY_POLL_US + 1)])('FERRO_BUSY_POLL_US=%j warns once and keeps the default', (value) => {
    const warnings = warningsOf(() => {
      expect(busyPollMicros(value)).toBeUndefined();
      expect(busyPollMicros(value)).toBeUndefined();
    });
    expect(warnings).toEqual([`FERRO_BUSY_POLL_US=${JSON.stringify(value)} is not an integer from 0 to ${MAX_BUSY_POLL_US}; using the default`]);
  });
});

describe.skipIf(process.platform !== 'linux')('FERRO_ENGINE_THREADS in a running process', () => {
  it('starts the threaded engine with that many worker threads', async () => {
    const before = process.env.FERRO_ENGINE_THREADS;
    const threadsBefore = engineThreadCount() ?? 0;
    process.env.FERRO_ENGINE_THREADS = '3';
    try {
      const srv = cleanup.track(await httpServer((_req, res) => res.end('ok')));
      const client = cleanup.track(new Client(srv.origin, { engine: 'threaded' }));
      const { body } = await client.request({ path: '/', method: 'GET' });
      expect(await body.text()).toBe('ok');
      expect(engineDriver('threaded')).toBe('threaded');
      expect((engineThreadCount() ?? 0) - threadsBefore).toBe(3);
    } finally {
      if (before === undefined) delete process.env.FERRO_ENGINE_THREADS;
      else process.env.FERRO_ENGINE_THREADS = before;
    }
  });

  // In a child: each process starts its threaded engine once. The value used to reach the binding as
  // it was, and -1 asked tokio for 4,294,967,295 workers: the process aborted.
  it('starts one worker thread, with a warning, when FERRO_ENGINE_THREADS is not valid', async () => {
    const srv = cleanup.track(await httpServer((_req, res) => res.end('ok')));
    const run = await runChild(
      undefined,
      srv.origin,
      `const c = new ferro.Client(origin, { engine: 'threaded' });
       process.stdout.write(await (await c.request({ path: '/', method: 'GET' })).body.text());
       const { readdirSync, readFileSync } = await import('node:fs');
       const comm = (t) => { try { return readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim(); } catch { return ''; } };
       process.stdout.write(' ' + readdirSync('/proc/self/task').filter((t) => comm(t) === 'ferro-engine').length);
       await c.close();`,
      { FERRO_ENGINE_THREADS: '-1' },
    );
    const auto = defaultThreads({ platform: 'linux', cores: availableParallelism() });
    expect(run.stdout).toBe(`ok ${auto}`);
    expect(run.stderr).toContain(`FERRO_ENGINE_THREADS="-1" is not an integer from 1 to ${MAX_ENGINE_THREADS}; using ${auto}`);
  });
});
