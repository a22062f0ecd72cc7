// One benchmark turn: one contender, one scenario, in a fresh process (so process.cpuUsage() counts
// exactly this contender, every thread of it, including a native engine's own threads).
//
// Usage: node bench/client.mjs '<json config>'   (normally forked by bench/run.mjs with IPC)
//
// Config:
//   contender     ferro-request | ferro-dispatch | undici-request | undici-dispatch | node-http
//                 | ferro-fetch | undici-fetch (WHATWG fetch on the library's own Pool)
//                 | ferro-bridged (ferro's request API over sockets from a custom connector)
//                 | ferro-interceptors | undici-interceptors (request() through retry + redirect)
//                 | ferro-websocket | undici-websocket (one WebSocket; a "request" is one echoed
//                   message of expectBytes bytes, `concurrency` messages in flight)
//   origin        e.g. http://127.0.0.1:12345 or https://127.0.0.1:12346
//   caFile        for https origins: the CA that signed the server's certificate
//   reset         every request on a new connection (reset: true; node-http: no keep-alive)
//   maxCachedSessions   TLS sessions kept (null: the library's default; 0: no resumption)
//   path          /small or /64k
//   expectBytes   exact body length; anything else counts as an error
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
//
// Result (sent over IPC as { type: 'result', ... }, or printed as JSON without IPC):
//   ok, error, lib, completed, errors, firstError, wallMs, cpuUserUs, cpuSystemUs, reqPerSec,
//   cpuUsPerReq, maxRssKb, undrained, latency { p50, p90, p99, mean, min, max, samples }
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

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
// Contenders. Each returns { lib: { name, version }, issue(cb), close() }.
// issue(cb) starts one request and calls cb(err, statusCode, bodyBytes) once the body is fully read.
// ---------------------------------------------------------------------------------------------------

function readVersion(pkgJsonPath) {
  try {
    return JSON.parse(fs.readFileSync(pkgJsonPath, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

async function loadFerro() {
  const file = fileURLToPath(cfg.ferroUrl);
  if (!fs.existsSync(file)) throw new Error(`ferro not built: ${file} does not exist (run npm run build)`);
  const mod = await import(cfg.ferroUrl);
  if (typeof mod.Pool !== 'function') throw new Error('ferro dist/index.js does not export Pool');
  const version = readVersion(new URL('../package.json', new URL('.', cfg.ferroUrl)));
  return { mod, lib: { name: 'ferro', version } };
}

async function loadUndici() {
  const mod = await import(cfg.undiciPkg);
  const version = readVersion(new URL(`../node_modules/${cfg.undiciPkg}/package.json`, import.meta.url));
  return { mod, lib: { name: cfg.undiciPkg, version } };
}

const ca = cfg.caFile ? fs.readFileSync(cfg.caFile, 'utf8') : null;
// TLS options as both libraries take them in `connect`.
const tlsOptions = () => (ca ? { ca, ...(cfg.maxCachedSessions != null ? { maxCachedSessions: cfg.maxCachedSessions } : null) } : null);

function poolOptions() {
  const tls = tlsOptions();
  return {
    connections: cfg.connections,
    pipelining: cfg.pipelining,
    // Both libraries negotiate h2 through ALPN when asked (undici 7 only on request).
    allowH2: cfg.h2 === true,
    ...(tls ? { connect: tls } : null),
    ...(cfg.maxGlobalConnections ? { maxGlobalConnections: cfg.maxGlobalConnections } : null),
  };
}

// Agents and interceptors get the origin in each request (undici 7's cache skips requests without one).
const requestOptions = () => ({
  path: cfg.path,
  method: 'GET',
  ...(cfg.agent || cfg.interceptor || cfg.withOrigin ? { origin: cfg.origin } : null),
  ...(cfg.reset ? { reset: true } : null),
});

// The scenario's interceptor; cookies gets a jar already holding 3 cookies for the origin.
function interceptorFor(mod) {
  if (cfg.interceptor === 'cache' && cfg.redisUrl) {
    return mod.interceptors.cache({ store: new mod.cacheStores.RedisCacheStore({ url: cfg.redisUrl, keyPrefix: `bench${process.pid}:` }) });
  }
  if (cfg.interceptor !== 'cookies') return mod.interceptors[cfg.interceptor]();
  const jar = new mod.CookieJar();
  for (const c of ['theme=dark', 'lang=en; Path=/', 'consent=yes; Max-Age=3600']) jar.setCookie(c, cfg.origin);
  return mod.interceptors.cookies({ jar });
}

// The dispatcher a contender drives: a Pool (or an Agent), composed with the scenario's interceptor.
function makeDispatcher(mod, extra = {}) {
  const opts = { ...poolOptions(), ...extra };
  const base = cfg.agent ? new mod.Agent(opts) : new mod.Pool(cfg.origin, opts);
  const composed = cfg.interceptor ? base.compose(interceptorFor(mod)) : base;
  return { dispatcher: composed, close: () => base.close() };
}

// What users write: await the response, then read the whole body. arrayBuffer() reads every byte
// without a text decode, so the 64 KiB case measures transport and not UTF-8 decoding.
function requestContender({ mod, lib }, extra = {}, wrap = (pool) => pool) {
  const { dispatcher: pool, close } = makeDispatcher(mod, extra);
  const target = wrap(pool);
  const opts = requestOptions();
  async function one() {
    const { statusCode, body } = await target.request(opts);
    const ab = await body.arrayBuffer();
    return [statusCode, ab.byteLength];
  }
  return {
    lib,
    issue(cb) {
      one().then(
        ([status, bytes]) => cb(null, status, bytes),
        (err) => cb(err),
      );
    },
    close,
  };
}

// A minimal controller-based dispatch handler that counts body bytes.
class CountingHandler {
  constructor(cb) {
    this.cb = cb;
    this.status = 0;
    this.bytes = 0;
  }
  onRequestStart(_controller, _context) {}
  onResponseStart(_controller, statusCode, _headers, _statusMessage) {
    this.status = statusCode;
  }
  onResponseData(_controller, chunk) {
    this.bytes += chunk.length;
  }
  onResponseEnd(_controller, _trailers) {
    const cb = this.cb;
    this.cb = null;
    if (cb) cb(null, this.status, this.bytes);
  }
  onResponseError(_controller, err) {
    const cb = this.cb;
    this.cb = null;
    if (cb) cb(err);
  }
}

function dispatchContender({ mod, lib }) {
  const { dispatcher: pool, close } = makeDispatcher(mod);
  const opts = { origin: cfg.origin, ...requestOptions() };
  return {
    lib,
    issue(cb) {
      try {
        // A `false` return only means "busy": the request is queued and will still complete.
        pool.dispatch(opts, new CountingHandler(cb));
      } catch (err) {
        cb(err);
      }
    },
    close,
  };
}

// WHATWG fetch with the library's Pool as its dispatcher; arrayBuffer() reads the whole body.
function fetchContender({ mod, lib }) {
  if (typeof mod.fetch !== 'function') throw new Error(`${lib.name} does not export fetch`);
  const pool = new mod.Pool(cfg.origin, poolOptions());
  const url = new URL(cfg.path, cfg.origin).href;
  const init = { dispatcher: pool, ...(cfg.reset ? { headers: { connection: 'close' } } : null) };
  async function one() {
    const res = await mod.fetch(url, init);
    const ab = await res.arrayBuffer();
    return [res.status, ab.byteLength];
  }
  return {
    lib,
    issue(cb) {
      one().then(
        ([status, bytes]) => cb(null, status, bytes),
        (err) => cb(err),
      );
    },
    close: () => pool.close(),
  };
}

// Any function other than buildConnector's own result makes ferro connect through it (bridged).
async function bridgedContender(loaded) {
  let build = loaded.mod.buildConnector;
  // Builds from before the export: the connector module itself.
  if (typeof build !== 'function') build = (await import(new URL('./core/connector.js', cfg.ferroUrl))).buildConnector;
  const connector = build(tlsOptions() ?? {});
  return requestContender(loaded, { connect: (opts, cb) => connector(opts, cb) });
}

// request() through the usual production stack: retry and redirect interceptors composed.
function interceptorsContender(loaded) {
  const { interceptors } = loaded.mod;
  return requestContender(loaded, {}, (pool) =>
    pool.compose(interceptors.retry(), interceptors.redirect({ maxRedirections: 3 })),
  );
}

function nodeHttpContender() {
  const url = new URL(cfg.origin);
  const maxSockets = cfg.connections;
  const secure = url.protocol === 'https:';
  const mod = secure ? https : http;
  const agent = new mod.Agent({ keepAlive: !cfg.reset, maxSockets, ...(tlsOptions() ?? {}) });
  // Without keep-alive an agent still hands a finished socket to a queued request; `connection:
  // close` makes each socket serve one request.
  const headers = cfg.reset ? { connection: 'close' } : undefined;
  const opts = { agent, host: url.hostname, port: url.port, path: cfg.path, method: 'GET', headers };
  return {
    lib: { name: secure ? 'node:https' : 'node:http', version: process.versions.node },
    issue(cb) {
      let done = false;
      const finish = (err, status, bytes) => {
        if (done) return;
        done = true;
        cb(err, status, bytes);
      };
      const req = mod.request(opts, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
        });
        res.on('end', () => finish(null, res.statusCode, bytes));
        res.on('error', (err) => finish(err));
      });
      req.on('error', (err) => finish(err));
      req.end();
    },
    close: () => agent.destroy(),
  };
}

// One WebSocket to the server's echo endpoint; issue() sends one message and completes when its echo
// arrives (echoes come back in order on the one connection).
async function websocketContender({ mod, lib }) {
  const ws = new mod.WebSocket(cfg.origin.replace(/^http/, 'ws') + cfg.path);
  ws.binaryType = 'arraybuffer';
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = (e) => reject(e.error ?? new Error('WebSocket failed to open'));
  });
  const waiting = [];
  let head = 0;
  ws.onmessage = (e) => {
    const cb = waiting[head];
    waiting[head++] = undefined;
    if (head > 4096 && head * 2 > waiting.length) {
      waiting.splice(0, head);
      head = 0;
    }
    cb?.(null, 200, e.data.byteLength);
  };
  ws.onclose = (e) => {
    const err = new Error(`WebSocket closed (${e.code})`);
    while (head < waiting.length) waiting[head++]?.(err);
  };
  const payload = Buffer.alloc(cfg.expectBytes, 120);
  return {
    lib,
    issue(cb) {
      waiting.push(cb);
      ws.send(payload);
    },
    close: () =>
      new Promise((resolve) => {
        ws.onclose = resolve;
        ws.close();
      }),
  };
}

async function makeContender(name) {
  switch (name) {
    case 'ferro-request':
      return requestContender(await loadFerro());
    case 'ferro-dispatch':
      return dispatchContender(await loadFerro());
    case 'undici-request':
      return requestContender(await loadUndici());
    case 'undici-dispatch':
      return dispatchContender(await loadUndici());
    case 'ferro-fetch':
      return fetchContender(await loadFerro());
    case 'undici-fetch':
      return fetchContender(await loadUndici());
    case 'node-http':
      return nodeHttpContender();
    case 'ferro-bridged':
      return bridgedContender(await loadFerro());
    case 'ferro-interceptors':
      return interceptorsContender(await loadFerro());
    case 'undici-interceptors':
      return interceptorsContender(await loadUndici());
    case 'ferro-websocket':
      return websocketContender(await loadFerro());
    case 'undici-websocket':
      return websocketContender(await loadUndici());
    default:
      throw new Error(`unknown contender: ${name}`);
  }
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
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await send({ type: 'mark', phase: 'start' });

  await wait(cfg.durationMs);
  stopWatchdog();

  const t1 = process.hrtime.bigint();
  const cpu1 = process.cpuUsage();
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
    undrained,
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
    c = await makeContender(cfg.contender);
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
      reqPerSec: r.completed / (r.wallNs / 1e9),
      cpuUsPerReq: r.completed ? cpuUs / r.completed : null,
      maxRssKb: process.resourceUsage().maxRSS,
      undrained: r.undrained,
      latency: r.latency,
    };
    await send(result);
  } catch (err) {
    await send({ type: 'result', ok: false, contender: cfg.contender, lib, error: errMessage(err) });
  }
  if (c) await withTimeout(c.close(), CLOSE_MS);
  process.exit(0);
}

main();
