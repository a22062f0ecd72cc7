// CPU time by kind of thread of this process, for bench/engine-threads.mjs: the JS thread, the
// threaded engine's workers (named "ferro-engine"), and the rest (V8's GC and compiler helpers,
// libuv's pool). It shows which part of a request's CPU moves to the engine threads and which stays
// on the JS thread. Linux only (/proc/self/task/<tid>/schedstat: ns on CPU); null elsewhere.
import fs from 'node:fs';

export function threadCpuNs() {
  if (process.platform !== 'linux') return null;
  const ns = { js: 0, engine: 0, other: 0 };
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const onCpu = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const kind =
        Number(tid) === process.pid
          ? 'js'
          : fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'ferro-engine'
            ? 'engine'
            : 'other';
      ns[kind] += onCpu;
    } catch {
      // the thread ended while it was read
    }
  }
  return ns;
}

/** µs per kind between two threadCpuNs() readings (null without both). */
export function threadCpuDeltaUs(a, b) {
  if (!a || !b) return null;
  return { js: (b.js - a.js) / 1000, engine: (b.engine - a.engine) / 1000, other: (b.other - a.other) / 1000 };
}
