// Soak: 1,000,000 requests (half through request(), half through dispatch()) over keep-alive,
// pipelined connections, with aborts, server errors, server-closed and destroyed sockets mixed
// in. Samples RSS, JS heap, active handles and the engine's own counts as it goes; fails if RSS
// grows past a bound after warm-up or anything is left behind at the end.
//   npm run soak                    (builds nothing: run `npm run build:ts` first)
//   SOAK_REQUESTS=200000 npm run soak
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Pool } from '../dist/index.js';
import { engineCounts } from '../dist/native/engine.js';

const TOTAL = Number(process.env.SOAK_REQUESTS ?? 1_000_000);
const IN_FLIGHT = 64;
const SAMPLES = 20;
const WARMUP = 0.1; // the first 10% only warm up
const RSS_BOUND = 32 * 1024 * 1024; // growth allowed after warm-up

const server = fork(fileURLToPath(new URL('./soak-server.mjs', import.meta.url)), { stdio: 'inherit' });
const [{ port }] = await once(server, 'message');
const origin = `http://127.0.0.1:${port}`;
const pool = new Pool(origin, { connections: 8, pipelining: 4 });
const handlesAtStart = process.getActiveResourcesInfo().length;

const outcome = { ok: 0, http500: 0, aborted: 0, failed: 0 };
const unexpected = new Map();
const note = (err) => {
  const key = `${err?.constructor?.name} ${err?.code}`;
  unexpected.set(key, (unexpected.get(key) ?? 0) + 1);
};

/** What request n does; a fixed pattern so runs compare. */
function kind(n) {
  if (n % 97 === 0) return 'destroy';
  if (n % 89 === 0) return 'abort';
  if (n % 61 === 0) return 'close';
  if (n % 31 === 0) return 'error';
  if (n % 13 === 0) return 'big';
  return 'ok';
}
/** How a body cut short by the server fails (a socket error, or the length it promised). */
const CUT_SHORT = new Set(['UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);
const pathOf = { destroy: '/destroy', abort: '/slow', close: '/close', error: '/error', big: '/big', ok: '/' };

async function viaRequest(n) {
  const k = kind(n);
  const ac = k === 'abort' ? new AbortController() : null;
  if (ac) setImmediate(() => ac.abort());
  try {
    const { statusCode, body } = await pool.request({ path: pathOf[k], method: 'GET', signal: ac?.signal });
    await body.dump({ limit: 1 << 20 });
    if (statusCode === 500) outcome.http500++;
    else outcome.ok++;
  } catch (err) {
    if (k === 'abort' && err?.code === 'UND_ERR_ABORTED') outcome.aborted++;
    else if (k === 'destroy' && CUT_SHORT.has(err?.code)) outcome.failed++;
    else note(err);
  }
}

function viaDispatch(n) {
  const k = kind(n);
  return new Promise((resolve) => {
    let status = 0;
    pool.dispatch(
      { path: pathOf[k], method: 'GET' },
      {
        onRequestStart(controller) {
          if (k === 'abort') setImmediate(() => controller.abort(new Error('soak abort')));
        },
        onResponseStart(_c, statusCode) {
          status = statusCode;
        },
        onResponseData() {},
        onResponseEnd() {
          if (status === 500) outcome.http500++;
          else outcome.ok++;
          resolve();
        },
        onResponseError(_c, err) {
          if (k === 'abort' && err?.message === 'soak abort') outcome.aborted++;
          else if (k === 'destroy' && CUT_SHORT.has(err?.code)) outcome.failed++;
          else note(err);
          resolve();
        },
      },
    );
  });
}

const mb = (b) => (b / 1024 / 1024).toFixed(1);
const samples = [];
function sample(done) {
  globalThis.gc?.();
  const mem = process.memoryUsage();
  const s = { done, rss: mem.rss, heap: mem.heapUsed, ext: mem.external, handles: process.getActiveResourcesInfo().length, ...engineCounts() };
  samples.push(s);
  console.log(
    `${String(done).padStart(8)}  rss ${mb(s.rss).padStart(6)} MB  heap ${mb(s.heap).padStart(5)} MB  external ${mb(s.ext).padStart(5)} MB  handles ${String(s.handles).padStart(3)}  ` +
      `engine: requests ${String(s.requests).padStart(3)} connections ${s.connections}  js: requests ${String(s.jsRequests).padStart(3)} pools ${s.jsPools}`,
  );
}

const started = process.hrtime.bigint();
console.log(`soak: ${TOTAL} requests, ${IN_FLIGHT} in flight, pool of 8 connections x pipelining 4 (${process.version})`);
sample(0);
let next = 0;
let done = 0;
const every = Math.floor(TOTAL / SAMPLES);
async function lane() {
  while (next < TOTAL) {
    const n = next++;
    // Even requests through request(), odd ones through dispatch().
    await (n % 2 === 0 ? viaRequest(n) : viaDispatch(n));
    done++;
    if (done % every === 0) sample(done);
  }
}
await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
const secs = Number(process.hrtime.bigint() - started) / 1e9;
await pool.close();
// Sockets close just after close() resolves; give the engine a moment to see them go.
for (let i = 0; i < 50 && engineCounts().connections > 0; i++) await new Promise((r) => setTimeout(r, 20));
server.send('stop');
await once(server, 'exit');
await new Promise((r) => setImmediate(r));
sample('closed');

const afterWarmup = samples.filter((s) => typeof s.done === 'number' && s.done >= TOTAL * WARMUP);
const rss = afterWarmup.map((s) => s.rss);
// A leak is a trend, not noise: compare the median of the last samples with the first ones.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quarter = Math.max(1, Math.floor(rss.length / 4));
const growth = median(rss.slice(-quarter)) - median(rss.slice(0, quarter));
const end = samples.at(-1);
const leftover = end.requests + end.connections + end.jsRequests + end.jsPools;
console.log(`\n${TOTAL} requests in ${secs.toFixed(1)} s (${Math.round(TOTAL / secs)} req/s)`);
console.log(`outcomes: ${JSON.stringify(outcome)}${unexpected.size ? `  unexpected: ${JSON.stringify([...unexpected])}` : ''}`);
console.log(
  `RSS after warm-up: ${mb(Math.min(...rss))}..${mb(Math.max(...rss))} MB; median of the last quarter minus the first: ${mb(growth)} MB (bound ${mb(RSS_BOUND)} MB)`,
);
console.log(`left behind after close: engine requests ${end.requests}, connections ${end.connections}; js requests ${end.jsRequests}, pools ${end.jsPools}; active handles ${end.handles} (at start ${handlesAtStart})`);
const ok = growth <= RSS_BOUND && leftover === 0 && unexpected.size === 0 && end.handles <= handlesAtStart;
console.log(ok ? 'soak: PASS' : 'soak: FAIL');
process.exit(ok ? 0 : 1);
