// The bench's child processes (servers, client turns, redis-server): every one is killed when the
// orchestrator exits, however it exits.
import { fork, spawn } from 'node:child_process';

export const children = new Set();

export function killAll() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
  children.clear();
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

export function log(msg) {
  process.stderr.write(msg + '\n');
}

/**
 * Spawns `command args`, pinned to `cpus` through taskset when a list is given, behind `wrapper`
 * (a command prefix such as perf stat's) when one is given. Tracked in `children`.
 */
export function spawnPinned(command, args, { cpus = null, wrapper = [], ...options }) {
  const argv = [...wrapper, ...(cpus ? ['taskset', '-c', cpus] : []), command, ...args];
  const child = argv.length === args.length + 1 ? spawn(command, args, options) : spawn(argv[0], argv.slice(1), options);
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** A node process with an IPC channel (stdio must include 'ipc'), pinned or wrapped as spawnPinned. */
export function forkNode(script, args, { cpus = null, wrapper = [], execArgv = [], stdio, env = process.env }) {
  if (!cpus && wrapper.length === 0) {
    const child = fork(script, args, { execArgv, stdio, env });
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  }
  return spawnPinned(process.execPath, [...execArgv, script, ...args], { cpus, wrapper, stdio, env });
}
