// How the engine is driven when the code does not say (issue 33 item 5): which driver, and how many
// worker threads the threaded one gets, from the CPUs this process may use. `FERRO_ENGINE` and
// `FERRO_ENGINE_THREADS` override the choice, `FERRO_BUSY_POLL_US` the inline driver's wait for a
// reply awake; a value that is not valid is reported once as a process warning and the automatic
// choice is used instead (never a throw from a dispatch).
// The measurements behind the rules: docs/performance/threads.md.
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../core/errors.js';

export type EngineKind = 'inline' | 'threaded';

/** What the choice depends on; the defaults describe this process (tests pass others). */
export interface Machine {
  readonly platform: NodeJS.Platform;
  /** CPUs this process may run on: `os.availableParallelism()` (the affinity mask; the cgroup quota on libuv ≥ 1.49). */
  readonly cores: number;
}

/** The most worker threads `FERRO_ENGINE_THREADS` may ask for: one JS thread cannot use more. */
export const MAX_ENGINE_THREADS = 16;

const here = (): Machine => ({ platform: process.platform, cores: availableParallelism() });

/**
 * The driver for a machine: `inline` on Linux with two CPUs or fewer (the hand-offs to an engine
 * thread cost more than the thread gives back there), `threaded` otherwise (the engine's socket
 * and parsing work then runs beside JS). Inline needs Linux: it watches the reactor's epoll fd.
 */
export function defaultDriver(m: Machine): EngineKind {
  return m.platform === 'linux' && m.cores <= 2 ? 'inline' : 'threaded';
}

/**
 * The threaded driver's worker threads for a machine: one, and a second from eight CPUs up. One JS
 * thread hands the engine at most ~0.6 of a thread's work on plain HTTP (docs/performance/threads.md);
 * a second helps only where the engine's share is larger (TLS, large bodies, many connections),
 * and only where CPUs are left once the JS thread, the engine thread and V8's helpers have theirs.
 */
export function defaultThreads(m: Machine): number {
  return m.cores >= 8 ? 2 : 1;
}

/** A variable's value as a plain decimal integer from `min` to `max` (spaces around allowed), else null. */
function integerIn(env: string, min: number, max: number): number | null {
  const n = /^\s*\d+\s*$/.test(env) ? Number(env) : NaN;
  return n >= min && n <= max ? n : null;
}

const warned = new Set<string>();
function warnOnce(name: string, value: string, expected: string, used: string | number): void {
  const key = `${name}=${value}`;
  if (warned.has(key)) return;
  warned.add(key);
  process.emitWarning(`${name}=${JSON.stringify(value)} is not ${expected}; using ${used}`, { code: 'FERRO_ENGINE_ENV' });
}

/** The driver asked for: the `engine` option (checked: a bad one throws), else `FERRO_ENGINE`, else the machine's default. */
export function engineKind(option?: unknown, env: string | undefined = process.env.FERRO_ENGINE, m?: Machine): EngineKind {
  if (option !== undefined && option !== null) {
    if (option !== 'inline' && option !== 'threaded') throw new InvalidArgumentError("engine must be 'inline' or 'threaded'");
    return option;
  }
  if (env === 'inline' || env === 'threaded') return env;
  const chosen = defaultDriver(m ?? here());
  if (env !== undefined && env !== '') warnOnce('FERRO_ENGINE', env, "'inline' or 'threaded'", chosen);
  return chosen;
}

/** The threaded driver's worker threads: `FERRO_ENGINE_THREADS` (an integer 1–16), else the machine's default. */
export function engineThreads(env: string | undefined = process.env.FERRO_ENGINE_THREADS, m: Machine = here()): number {
  const chosen = defaultThreads(m);
  if (env === undefined || env === '') return chosen;
  const n = integerIn(env, 1, MAX_ENGINE_THREADS);
  if (n !== null) return n;
  warnOnce('FERRO_ENGINE_THREADS', env, `an integer from 1 to ${MAX_ENGINE_THREADS}`, chosen);
  return chosen;
}

/** The most `FERRO_BUSY_POLL_US` may ask for: a longer wait only burns CPU a network reply never repays. */
export const MAX_BUSY_POLL_US = 1000;

/**
 * How long the inline driver's loop may wait awake for a reply before it sleeps, in µs:
 * `FERRO_BUSY_POLL_US` (an integer 0–1000, 0 turns it off), else undefined (the engine's default).
 */
export function busyPollMicros(env: string | undefined = process.env.FERRO_BUSY_POLL_US): number | undefined {
  if (env === undefined || env === '') return undefined;
  const n = integerIn(env, 0, MAX_BUSY_POLL_US);
  if (n !== null) return n;
  warnOnce('FERRO_BUSY_POLL_US', env, `an integer from 0 to ${MAX_BUSY_POLL_US}`, 'the default');
  return undefined;
}
