// One benchmark turn: one contender, one scenario, in a fresh process (so process.cpuUsage() counts
// exactly this contender, every thread of it, including a native engine's own threads).
//
// Usage: node bench/client.mjs '<json config>'   (normally forked by bench/run.mjs with IPC)
//
// Config:
//   contender     <lib>-<api> (lib ferro or undici; api request, request-text, request-dump,
//                 request-iter, stream, dispatch, fetch, interceptors, websocket: bench/contenders.mjs),
//                 ferro-bridged or node-http
//   origin        e.g. http://127.0.0.1:12345 or https://127.0.0.1:12346
//   caFile        for https origins: the CA that signed the server's certificate
//   reset         every request on a new connection (reset: true; node-http: no keep-alive)
//   maxCachedSessions   TLS sessions kept (null: the library's default; 0: no resumption)
//   path          /small or /64k
//   expectBytes   exact body length; anything else counts as an error
//   blocking      false: every request is sent with `blocking: false` (pipelined behind the previous)
//   interceptor   'decompress' | 'dns' | 'cookies' | null: the dispatcher is composed with that interceptor
//   withOrigin    requests name their origin even without an interceptor (the cookies-off row)
//   redisUrl      with interceptor 'cache': the store is a RedisCacheStore on this server (ferro only)
//   agent         use an Agent (requests carry the origin) instead of a Pool bound to it
//   mode          'throughput' (keep `concurrency` requests in flight for a time window)
//                 'latency'    (one request at a time, `requests` timed requests)
//   concurrency, connections, pipelining
//   warmupMs, durationMs             (throughput)
//   warmupMs, requests               (latency: warm up for warmupMs, at least 50 requests)
//   interceptor   null, or 'cache': the Pool is composed with interceptors.cache()
//   yieldEach     start each next request from setImmediate instead of the completion callback
//   undiciPkg     'undici' or 'undici7'
//   ferroUrl      file: URL of ferro's dist/index.js
//   perf          null, or { ctl, ack } (perf stat control FIFOs, or null without perf): count N-API
//                 crossings and V8 heap allocation over the measured window (bench/counters.mjs)
//
// Result (sent over IPC as { type: 'result', ... }, or printed as JSON without IPC):
//   ok, error, lib, completed, errors, firstError, wallMs, cpuUserUs, cpuSystemUs, threadCpuUs
//   (throughput, Linux: { js, engine, other } µs, bench/thread-cpu.mjs), reqPerSec,
//   cpuUsPerReq, maxRssKb, undrained, latency { p50, p90, p99, mean, min, max, samples },
//   counted (perf turns: { napi: { in, out, byName } | null, heap: { bytes, gcs } })
import { makeContender } from './contenders.mjs';
import { countNapi, heapAllocation, napiDelta, perfControl } from './counters.mjs';
import { threadCpuDeltaUs, threadCpuNs } from './thread-cpu.mjs';

const cfg = JSON.parse(process.argv[2] ?? '{}');

const MAX_ERRORS = 1000; // give up on a contender that fails this often
const DRAIN_MS = 5000; // after the window: wait this long for in-flight requests
const CLOSE_MS = 2000; // then give close() this long
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 10_000); // no completion for this long: give up

function send(msg) {
  return new Promise((resolve) => {
    if (process.send && process.connected) process.send(msg, () => resolve());
    else {
      if (msg.type === 'result') process.stdout.write(JSON.stringify(msg) + '\n');
      resolve();
    }
  });
}

if (process.send) process.on('disconnect', () => process.exit(1));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const withTimeout = (p, ms) => Promise.race([Promise.resolve(p).catch(() => {}), sleep(ms)]);

function errMessage(err) {
  if (!err) return 'unknown error';
  const code = err.code ? `${err.code}: ` : '';
  return `${code}${err.message ?? String(err)}`;
}

// ---------------------------------------------------------------------------------------------------
// Drivers
// ---------------------------------------------------------------------------------------------------

function checkResult(err, status, bytes) {
  if (err) return err;
  if (status !== 200) return new Error(`unexpected status ${status}`);
  if (bytes !== cfg.expectBytes) return new Error(`body was ${bytes} bytes, expected ${cfg.expectBytes}`);
  return null;
}

// Fails the turn when nothing completes for STALL_MS (a hung contender), instead of waiting for the
// parent to kill the process: the report then says what happened.
let lastProgress = Date.now();
let stallReject = null;
const stalled = new Promise((_, reject) => (stallReject = reject));
stalled.catch(() => {});
const progress = () => {
  lastProgress = Date.now();
};
function startWatchdog(describe) {
  progress();
  const t = setInterval(() => {
    if (Date.now() - lastProgress > STALL_MS) {
      clearInterval(t);
      stallReject(new Error(`stalled: nothing completed for ${STALL_MS / 1000} s (${describe()})`));
    }
  }, 500);
  t.unref();
  return () => clearInterval(t);
}

// --perf turns: counters over exactly the measured window; a no-op otherwise.
let napi = null;
let perfCtl = null;
async function setupCounters() {
  if (!cfg.perf) return;
  // Before ferro loads, so that every crossing goes through the counting wrappers.
  if (cfg.contender.startsWith('ferro')) napi = await countNapi(cfg.ferroUrl);
  if (cfg.perf.ctl) perfCtl = perfControl(cfg.perf.ctl, cfg.perf.ack);
}
function startCounting() {
  if (!cfg.perf) return () => null;
  const napi0 = napi?.snapshot();
  const stopHeap = heapAllocation();
  perfCtl?.enable();
  return () => {
    perfCtl?.disable();
    return { heap: stopHeap(), napi: napi ? napiDelta(napi0, napi.snapshot()) : null };
  };
}

function cpuDelta(a, b) {
  return { user: b.user - a.user, system: b.system - a.system };
}

// Keep `concurrency` requests in flight: each completion starts the next request.
async function runThroughput(c) {
  let running = true;
  let inflight = 0;
  let completed = 0;
  let errors = 0;
  let firstError = null;
  let fatal = null;
  let onIdle = null;

  const onDone = (err, status, bytes) => {
    inflight--;
    lastProgress = Date.now();
    const bad = checkResult(err, status, bytes);
    if (bad) {
      errors++;
      if (!firstError) firstError = errMessage(bad);
      if (errors >= MAX_ERRORS && !fatal) {
        fatal = new Error(`${errors} errors; first: ${firstError}`);
        running = false;
      }
    } else {
      completed++;
    }
    if (running) {
      // After an error, defer: a synchronous failure must not recurse. With `yieldEach` every
      // next request waits for the event loop's check phase: a cache hit can complete without any
      // I/O, and a chain of them in microtasks would starve the measurement's own timers.
      if (bad || cfg.yieldEach) setImmediate(launch);
      else launch();
    } else if (inflight === 0 && onIdle) {
      onIdle();
    }
  };
  function launch() {
    if (!running) return;
    inflight++;
    c.issue(onDone);
  }

  const stopWatchdog = startWatchdog(() => `${inflight} requests in flight`);
  const wait = (ms) => Promise.race([sleep(ms), stalled]);
  for (let i = 0; i < cfg.concurrency; i++) launch();

  await wait(cfg.warmupMs);
  if (fatal) throw fatal;
  const c0 = completed;
  const e0 = errors;
  const stopCounting = startCounting();
  const cpu0 = process.cpuUsage();
  const threads0 = threadCpuNs();
  const t0 = process.hrtime.bigint();
  await send({ type: 'mark', phase: 'start' });

  await wait(cfg.durationMs);
  stopWatchdog();

  const t1 = process.hrtime.bigint();
  const threads1 = threadCpuNs();
  const cpu1 = process.cpuUsage();
  const counted = stopCounting();
  const c1 = completed;
  const e1 = errors;
  await send({ type: 'mark', phase: 'end' });
  if (fatal) throw fatal;

  running = false;
  let undrained = 0;
  if (inflight > 0) {
    await Promise.race([new Promise((r) => (onIdle = r)), sleep(DRAIN_MS)]);
    undrained = inflight;
  }

  return {
    completed: c1 - c0,
    errors: e1 - e0,
    firstError,
    wallNs: Number(t1 - t0),
    cpu: cpuDelta(cpu0, cpu1),
    threadCpu: threadCpuDeltaUs(threads0, threads1),
    undrained,
    counted,
  };
}

// One request at a time; time each one from the call until the last body byte has been read.
async function runLatency(c) {
  let errors = 0;
  let firstError = null;
  const stopWatchdog = startWatchdog(() => '1 request in flight');
  const one = () =>
    Promise.race([
      new Promise((resolve) => {
        c.issue((err, status, bytes) => {
          progress();
          resolve(checkResult(err, status, bytes));
        });
      }),
      stalled,
    ]);
  const note = (bad) => {
    errors++;
    if (!firstError) firstError = errMessage(bad);
    if (errors >= MAX_ERRORS) throw new Error(`${errors} errors; first: ${firstError}`);
  };

  const warmupEnd = Date.now() + cfg.warmupMs;
  for (let i = 0; i < 50 || Date.now() < warmupEnd; i++) {
    const bad = await one();
    if (bad) note(bad);
  }
  const e0 = errors;
  const samples = new Float64Array(cfg.requests);
  let n = 0;
  const stopCounting = startCounting();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await send({ type: 'mark', phase: 'start' });
  for (let i = 0; i < cfg.requests; i++) {
    const s = process.hrtime.bigint();
    const bad = await one();
    const e = process.hrtime.bigint();
    if (bad) note(bad);
    else samples[n++] = Number(e - s) / 1000;
  }
  const t1 = process.hrtime.bigint();
  const cpu1 = process.cpuUsage();
  const counted = stopCounting();
  stopWatchdog();
  await send({ type: 'mark', phase: 'end' });

  const sorted = Array.from(samples.subarray(0, n)).sort((a, b) => a - b);
  const pct = (p) => (n ? sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))] : null);
  const round1 = (x) => (x == null ? null : Math.round(x * 10) / 10);
  return {
    completed: n,
    errors: errors - e0,
    firstError,
    wallNs: Number(t1 - t0),
    cpu: cpuDelta(cpu0, cpu1),
    undrained: 0,
    counted,
    latency: {
      p50: round1(pct(50)),
      p90: round1(pct(90)),
      p99: round1(pct(99)),
      mean: round1(n ? sorted.reduce((a, b) => a + b, 0) / n : null),
      min: round1(n ? sorted[0] : null),
      max: round1(n ? sorted[n - 1] : null),
      samples: sorted.map(round1),
    },
  };
}

async function main() {
  let c;
  let lib = null;
  try {
    await setupCounters();
    c = await makeContender(cfg);
    lib = c.lib;
    const r = cfg.mode === 'latency' ? await runLatency(c) : await runThroughput(c);
    const cpuUs = r.cpu.user + r.cpu.system;
    const result = {
      type: 'result',
      ok: r.completed > 0,
      error: r.completed > 0 ? null : `no request completed${r.firstError ? `; first error: ${r.firstError}` : ''}`,
      contender: cfg.contender,
      lib,
      completed: r.completed,
      errors: r.errors,
      firstError: r.firstError,
      wallMs: r.wallNs / 1e6,
      cpuUserUs: r.cpu.user,
      cpuSystemUs: r.cpu.system,
      threadCpuUs: r.threadCpu ?? null,
      reqPerSec: r.completed / (r.wallNs / 1e9),
      cpuUsPerReq: r.completed ? cpuUs / r.completed : null,
      maxRssKb: process.resourceUsage().maxRSS,
      undrained: r.undrained,
      latency: r.latency,
      counted: r.counted,
    };
    await send(result);
  } catch (err) {
    await send({ type: 'result', ok: false, contender: cfg.contender, lib, error: errMessage(err) });
  }
  if (c) await withTimeout(c.close(), CLOSE_MS);
  process.exit(0);
}

main();
