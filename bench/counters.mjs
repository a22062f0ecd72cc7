// Counters for a `--perf` turn (bench/client.mjs), all outside ferro's own code so that they cost
// nothing in a normal run:
// - countNapi: wraps every function of ferro's native binding (module functions, class constructors,
//   prototype methods and getters: JS → native crossings) and every JS function handed to a native
//   constructor (the engine's event delivery: native → JS crossings).
// - heapAllocation: bytes allocated on the V8 heap in a window (Node 20 has no allocation counter:
//   the growth of the used heap plus what every GC in between freed, from v8.GCProfiler).
// - perfControl: enables and disables the `perf stat` that run.mjs wrapped the process in, through
//   its control FIFOs, so that the counts cover exactly the measured window.
import fs from 'node:fs';
import v8 from 'node:v8';

/** Wraps ferro's binding (before ferro itself is loaded); snapshot() reads the counts so far. */
export async function countNapi(ferroUrl) {
  const { binding } = await import(new URL('./native/binding.js', ferroUrl).href);
  const byName = new Map();
  const totals = { in: 0, out: 0 };
  const bump = (dir, name) => {
    totals[dir]++;
    byName.set(name, (byName.get(name) ?? 0) + 1);
  };
  const countIn = (name, fn) =>
    function (...args) {
      bump('in', name);
      return fn.apply(this, args);
    };
  const countOut = (name, fn) =>
    function (...args) {
      bump('out', name);
      return fn.apply(this, args);
    };
  for (const key of Object.keys(binding)) {
    const value = binding[key];
    if (typeof value !== 'function') continue;
    const proto = value.prototype;
    const members = proto ? Object.getOwnPropertyNames(proto).filter((p) => p !== 'constructor') : [];
    if (members.length === 0) {
      binding[key] = countIn(key, value);
      continue;
    }
    for (const p of members) {
      const d = Object.getOwnPropertyDescriptor(proto, p);
      if (typeof d.value === 'function') proto[p] = countIn(`${key}.${p}`, d.value);
      else if (d.get) Object.defineProperty(proto, p, { ...d, get: countIn(`${key}.${p}`, d.get) });
    }
    binding[key] = class extends value {
      constructor(...args) {
        bump('in', `new ${key}`);
        super(...args.map((a) => (typeof a === 'function' ? countOut(`${key} callback`, a) : a)));
      }
    };
  }
  return {
    snapshot: () => ({ ...totals, byName: Object.fromEntries(byName) }),
  };
}

/** Per-name differences between two countNapi snapshots, largest first. */
export function napiDelta(a, b) {
  const names = Object.entries(b.byName)
    .map(([name, n]) => [name, n - (a.byName[name] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
  return { in: b.in - a.in, out: b.out - a.out, byName: Object.fromEntries(names) };
}

/** Starts counting V8 heap allocation; the returned function stops and returns { bytes, gcs }. */
export function heapAllocation() {
  const used0 = v8.getHeapStatistics().used_heap_size;
  const profiler = new v8.GCProfiler();
  profiler.start();
  return () => {
    const { statistics } = profiler.stop();
    const used1 = v8.getHeapStatistics().used_heap_size;
    let freed = 0;
    for (const gc of statistics) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    return { bytes: used1 - used0 + freed, gcs: statistics.length };
  };
}

/**
 * perf stat's control FIFOs (`--control=fifo:ctl,ack`, started with events disabled): enable() and
 * disable() send the command and wait for perf's acknowledgement.
 */
export function perfControl(ctlPath, ackPath) {
  // O_RDWR on a FIFO never blocks in open(), whichever side perf has opened yet.
  const ctl = fs.openSync(ctlPath, 'r+');
  const ack = fs.openSync(ackPath, 'r+');
  const send = (cmd) => {
    fs.writeSync(ctl, `${cmd}\n`);
    const buf = Buffer.alloc(16);
    fs.readSync(ack, buf); // blocks until perf answers "ack"
  };
  return {
    enable: () => send('enable'),
    disable: () => send('disable'),
  };
}
