// `--perf`: where a request's time goes, for ferro and undici side by side. Each contender gets one
// extra turn per scenario (after the timed rounds, whose numbers it does not touch) under
// `perf stat`, counting over exactly the measured window (the client enables and disables the
// counters through perf's control FIFOs, bench/counters.mjs):
// - syscalls (raw_syscalls:sys_enter, and the ones an HTTP exchange makes, by name),
// - context switches (a thread that blocks and is woken again: the wake-ups),
// - libc malloc calls (a uprobe: Rust's allocations and Node's C++ ones; the V8 heap is not malloc),
// and the client itself counts N-API crossings and V8 heap allocation (bench/counters.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log } from './processes.mjs';

const SYSCALLS = [
  'epoll_wait',
  'epoll_pwait',
  'epoll_pwait2',
  'epoll_ctl',
  'read',
  'readv',
  'recvfrom',
  'recvmsg',
  'write',
  'writev',
  'sendto',
  'sendmsg',
  'futex',
  'io_uring_enter',
  'sched_yield',
  'mmap',
  'munmap',
  'mprotect',
  'madvise',
  'brk',
  'getpid',
  'ioctl',
  'timerfd_settime',
  'clock_nanosleep',
];
/** How the report groups syscalls. */
export const SYSCALL_GROUPS = {
  wait: ['epoll_wait', 'epoll_pwait', 'epoll_pwait2'],
  read: ['read', 'readv', 'recvfrom', 'recvmsg'],
  write: ['write', 'writev', 'sendto', 'sendmsg'],
  futex: ['futex'],
};
const MALLOC_EVENT = 'probe_libc:malloc';

function libcPath() {
  const out = spawnSync('ldd', [process.execPath], { encoding: 'utf8' }).stdout ?? '';
  return /libc\.so\.6 => (\S+)/.exec(out)?.[1] ?? null;
}

/** Checks perf once per run: { events, cleanup() } or { error }. */
export function perfSetup() {
  if (spawnSync('perf', ['--version']).status !== 0) return { error: 'perf is not installed (Debian: apt-get install linux-perf)' };
  let available = '';
  try {
    available = fs.readFileSync('/sys/kernel/tracing/available_events', 'utf8');
  } catch {
    return { error: 'no tracefs at /sys/kernel/tracing (syscall tracepoints need it; run as root)' };
  }
  const syscalls = SYSCALLS.filter((s) => available.includes(`syscalls:sys_enter_${s}\n`));
  const events = ['raw_syscalls:sys_enter', ...syscalls.map((s) => `syscalls:sys_enter_${s}`), 'context-switches', 'cpu-migrations', 'task-clock'];
  // The malloc uprobe, made for this run when it is not there yet (and removed again at the end).
  let madeProbe = false;
  if (!spawnSync('perf', ['list', MALLOC_EVENT], { encoding: 'utf8' }).stdout?.includes(MALLOC_EVENT)) {
    const libc = libcPath();
    madeProbe = libc !== null && spawnSync('perf', ['probe', '-q', '-x', libc, 'malloc']).status === 0;
    if (!madeProbe) log('--perf: no malloc uprobe (perf probe failed): malloc counts are left out');
  }
  if (madeProbe || spawnSync('perf', ['list', MALLOC_EVENT], { encoding: 'utf8' }).stdout?.includes(MALLOC_EVENT)) events.push(MALLOC_EVENT);
  const check = spawnSync('perf', ['stat', '-x,', '-e', events.join(','), 'true'], { encoding: 'utf8' });
  if (check.status !== 0) return { error: `perf stat cannot count here: ${check.stderr.trim().split('\n')[0]}` };
  return {
    events,
    cleanup() {
      if (madeProbe) spawnSync('perf', ['probe', '-q', '-d', MALLOC_EVENT]);
    },
  };
}

/**
 * One perf turn: the command prefix to run the client behind, the control FIFOs to hand it
 * (cfg.perf), and collect() for the counts once the client has exited.
 */
export function perfTurn(setup) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferro-bench-perf-'));
  const ctl = path.join(dir, 'ctl');
  const ack = path.join(dir, 'ack');
  const out = path.join(dir, 'stat.csv');
  for (const f of [ctl, ack]) if (spawnSync('mkfifo', [f]).status !== 0) throw new Error(`mkfifo ${f} failed`);
  return {
    // -D -1: counters start disabled; the client enables them for its measured window.
    wrapper: ['perf', 'stat', '-x,', '-o', out, '-D', '-1', `--control=fifo:${ctl},${ack}`, '-e', setup.events.join(','), '--'],
    cfg: { ctl, ack },
    collect() {
      let text = '';
      try {
        text = fs.readFileSync(out, 'utf8');
      } catch {}
      fs.rmSync(dir, { recursive: true, force: true });
      return parsePerfCsv(text);
    },
  };
}

/** perf stat -x, output: event name → count (task-clock in ms); uncounted events are left out. */
export function parsePerfCsv(text) {
  const counts = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [value, , event] = line.split(',');
    const n = Number(value);
    if (event && Number.isFinite(n)) counts[event.replace(/^syscalls:sys_enter_/, '')] = n;
  }
  return counts;
}
