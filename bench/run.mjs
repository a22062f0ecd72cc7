// Benchmark orchestrator: `npm run bench` / `node bench/run.mjs [options]`.
//
// Starts bench/server.mjs in its own process, then for every scenario runs every contender in turn,
// each turn in a fresh bench/client.mjs process, rounds interleaved with the contender order rotated.
// Prints a Markdown report on stdout (progress goes to stderr) and writes bench/results/latest.json.
//
// Options (flags win over environment):
//   --quick                  ~1 s smoke run (1 round, short windows, fewer latency samples)
//   --seconds=N              measured window per turn        (env BENCH_SECONDS, default 5)
//   --warmup=N               warm-up seconds per turn        (env BENCH_WARMUP, default 1)
//   --rounds=N               rounds per scenario             (env BENCH_ROUNDS, default 2)
//   --latency-requests=N     timed requests, latency mode    (env BENCH_LATENCY_REQUESTS, default 3000)
//   --contenders=a,b         subset of contenders            (env BENCH_CONTENDERS; ferro-bridged,
//                            ferro-inline-* / ferro-threaded-* (request or dispatch on that engine
//                            driver, whatever FERRO_ENGINE says) and
//                                                            the *-interceptors pair are opt-in)
//   --scenarios=a,b          subset of small,64k,https,h2,h2-64k,new-connections,
//                            new-connections-no-resume,cache,latency,memory
//                            ws-100,ws-64k (WebSocket echo: their own contenders ferro-/undici-websocket)
//                            decompress-gzip,decompress-br,dns,dns-off,agent,agent-cap,cookies,cookies-off,
//                            cache-hit,cache-hit-redis (latency of a cache hit; the Redis row starts
//                            a redis-server of its own, and fails saying so without one) (env BENCH_SCENARIOS)
//   --server-cpus=LIST       pin the server to these CPUs (taskset list, e.g. 0 or 0-7)
//   --client-cpus=LIST       pin every client turn to these CPUs (e.g. 1 or 8,9)
//   --server-workers=N       run the server as a node:cluster of N processes (default 1)
// Environment only:
//   BENCH_FERRO=path         ferro entry module to load instead of dist/index.js
import { fork, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
// BENCH_FERRO may point at another build of ferro (a file path to its entry module).
const FERRO_ENTRY = path.resolve(process.env.BENCH_FERRO ?? path.join(ROOT, 'dist', 'index.js'));
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'latest.json');

const DEFAULT_CONTENDERS = [
  'ferro-request',
  'ferro-dispatch',
  'ferro-fetch',
  'undici-request',
  'undici-dispatch',
  'undici-fetch',
  'node-http',
];
// fetch is measured where it is a throughput question; new connections and latency compare the transports.
const FETCH_CONTENDERS = ['ferro-fetch', 'undici-fetch'];
// ferro-bridged: ferro's request API over Node sockets from a custom connector (the bridged transport).
const WEBSOCKET_CONTENDERS = ['ferro-websocket', 'undici-websocket'];
// ferro-interceptors / undici-interceptors: request() through composed retry + redirect interceptors.
// ferro-inline-request etc.: a ferro contender with FERRO_ENGINE set for its process.
const DRIVER_CONTENDERS = ['inline', 'threaded'].flatMap((d) => [`ferro-${d}-request`, `ferro-${d}-dispatch`]);
const driverOf = (c) => /^ferro-(inline|threaded)-/.exec(c)?.[1] ?? null;
const ALL_CONTENDERS = [
  ...DEFAULT_CONTENDERS,
  ...DRIVER_CONTENDERS,
  'ferro-bridged',
  'ferro-interceptors',
  'undici-interceptors',
  ...WEBSOCKET_CONTENDERS,
];
// Each contender is compared with undici's same API.
const BASELINE = {
  'ferro-inline-request': 'undici-request',
  'ferro-inline-dispatch': 'undici-dispatch',
  'ferro-threaded-request': 'undici-request',
  'ferro-threaded-dispatch': 'undici-dispatch',
  'ferro-request': 'undici-request',
  'ferro-dispatch': 'undici-dispatch',
  'undici-request': 'undici-request',
  'undici-dispatch': 'undici-dispatch',
  'ferro-fetch': 'undici-fetch',
  'undici-fetch': 'undici-fetch',
  'node-http': 'undici-request',
  'ferro-bridged': 'undici-request',
  'ferro-interceptors': 'undici-interceptors',
  'undici-interceptors': 'undici-interceptors',
  'ferro-websocket': 'undici-websocket',
  'undici-websocket': 'undici-websocket',
};

// ----------------------------------------------------------------------------------------- options

function parseArgs(argv) {
  const out = {};
  for (const arg of argv) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unexpected argument: ${arg}`);
    out[m[1]] = m[2] ?? true;
  }
  return out;
}

function num(value, name) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${value}`);
  return n;
}

function list(value) {
  return String(value)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const args = parseArgs(process.argv.slice(2));
const env = process.env;
const quick = args.quick === true;
const opt = {
  quick,
  seconds: num(args.seconds ?? env.BENCH_SECONDS ?? (quick ? 1 : 5), 'seconds'),
  warmup: num(args.warmup ?? env.BENCH_WARMUP ?? (quick ? 0.5 : 1), 'warmup'),
  rounds: Math.round(num(args.rounds ?? env.BENCH_ROUNDS ?? (quick ? 1 : 2), 'rounds')),
  latencyRequests: Math.round(
    num(args['latency-requests'] ?? env.BENCH_LATENCY_REQUESTS ?? (quick ? 500 : 3000), 'latency-requests'),
  ),
  contenders: list(args.contenders ?? env.BENCH_CONTENDERS ?? DEFAULT_CONTENDERS.join(',')),
  scenarios: list(
    args.scenarios ??
      env.BENCH_SCENARIOS ??
      'small,64k,https,h2,h2-64k,new-connections,new-connections-no-resume,cache,latency,memory,ws-100,ws-64k,decompress-gzip,decompress-br,dns,dns-off,agent,agent-cap,cookies,cookies-off,cache-hit,cache-hit-redis',
  ),
  serverCpus: cpuList(args['server-cpus'], 'server-cpus'),
  clientCpus: cpuList(args['client-cpus'], 'client-cpus'),
  serverWorkers: Math.round(num(args['server-workers'] ?? 1, 'server-workers')),
};
if ((opt.serverCpus || opt.clientCpus) && spawnSync('taskset', ['-V']).status !== 0) {
  throw new Error('--server-cpus / --client-cpus need taskset (util-linux)');
}

function cpuList(value, name) {
  if (value == null) return null;
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(String(value))) throw new Error(`${name} must be a CPU list such as 0 or 0-3,8, got ${value}`);
  return String(value);
}
for (const c of opt.contenders) if (!ALL_CONTENDERS.includes(c)) throw new Error(`unknown contender ${c}`);

const THROUGHPUT = { mode: 'throughput', concurrency: 100, connections: 50, pipelining: 10 };
const NEW_CONNECTIONS = {
  mode: 'throughput',
  noFetch: true,
  concurrency: 10,
  connections: 10,
  pipelining: 1,
  secure: true,
  reset: true,
  path: '/small',
  expectBytes: 12,
};
const CACHE_HIT = { mode: 'latency', concurrency: 1, connections: 1, pipelining: 1, path: '/cacheable', expectBytes: 12, interceptor: 'cache' };
const WEBSOCKET = { mode: 'throughput', concurrency: 16, connections: 1, pipelining: 1, path: '/ws', contenders: WEBSOCKET_CONTENDERS };
// The https server's certificate (localhost, 127.0.0.1) is signed by the test CA.
const CA_FILE = path.join(ROOT, '__test__', 'fixtures', 'tls', 'ca.pem');
const SCENARIOS = {
  small: { ...THROUGHPUT, path: '/small', expectBytes: 12, title: 'small body (12 B)' },
  '64k': { ...THROUGHPUT, path: '/64k', expectBytes: 65536, title: '64 KiB body' },
  https: { ...THROUGHPUT, secure: true, path: '/small', expectBytes: 12, title: 'https keep-alive, small body' },
  // Every request on a new TLS connection (`reset: true`; node-http: an agent without keep-alive):
  // req/s is new connections per second.
  'new-connections': { ...NEW_CONNECTIONS, title: 'a new TLS connection per request, sessions resumed' },
  'new-connections-no-resume': {
    ...NEW_CONNECTIONS,
    maxCachedSessions: 0,
    title: 'a new TLS connection per request, maxCachedSessions: 0',
  },
  // HTTP/2 over TLS: 100 in flight over one session (Pool of 1 connection, allowH2).
  h2: { ...THROUGHPUT, secure: true, h2: true, connections: 1, noFetch: true, noNode: true, path: '/small', expectBytes: 12, title: 'h2, one session, small body' },
  'h2-64k': { ...THROUGHPUT, secure: true, h2: true, connections: 1, noFetch: true, noNode: true, path: '/64k', expectBytes: 65536, title: 'h2, one session, 64 KiB body' },
  // Peak RSS of the client process with 10,000 requests in flight on Pool 50 × pipelining 10.
  memory: { ...THROUGHPUT, noFetch: true, concurrency: 10_000, path: '/small', expectBytes: 12, title: 'peak RSS, 10,000 in flight' },
  // 100 in flight for one cacheable URL through interceptors.cache() (the default memory store):
  // after the first response every request is served from the cache.
  // Every contender starts its next request from setImmediate (yieldEach): undici serves hits in
  // microtasks, and a completion-driven chain of them would never let the window's timer fire.
  cache: {
    ...THROUGHPUT,
    path: '/cacheable',
    expectBytes: 12,
    interceptor: 'cache',
    yieldEach: true,
    title: 'one cacheable URL through interceptors.cache()',
  },
  // WebSocket echo on one connection, 16 messages in flight: "req/s" is echoed messages per second.
  'ws-100': { ...WEBSOCKET, expectBytes: 100, title: 'WebSocket echo, 100 B messages' },
  'ws-64k': { ...WEBSOCKET, expectBytes: 65536, title: 'WebSocket echo, 64 KiB messages' },
  // 1 MiB decoded bodies through interceptors.decompress: 10 in flight on 10 connections.
  'decompress-gzip': {
    ...THROUGHPUT,
    concurrency: 10,
    connections: 10,
    pipelining: 1,
    interceptor: 'decompress',
    path: '/gzip-1m',
    expectBytes: 1024 * 1024,
    title: '1 MiB gzip body through decompress',
  },
  'decompress-br': {
    ...THROUGHPUT,
    concurrency: 10,
    connections: 10,
    pipelining: 1,
    interceptor: 'decompress',
    path: '/br-1m',
    expectBytes: 1024 * 1024,
    title: '1 MiB br body through decompress',
  },
  // A response that sets a cookie, with interceptors.cookies (a jar holding 3 cookies for the
  // origin, so each request also sends a cookie header) and without: ferro only (undici has no jar).
  cookies: { ...THROUGHPUT, ferroOnly: true, path: '/set-cookie', expectBytes: 12, interceptor: 'cookies', title: '/set-cookie through cookies' },
  'cookies-off': { ...THROUGHPUT, ferroOnly: true, noFetch: true, withOrigin: true, path: '/set-cookie', expectBytes: 12, title: '/set-cookie without cookies' },
  // An Agent to http://localhost:<port>, with interceptors.dns and without.
  dns: { ...THROUGHPUT, agent: true, host: 'localhost', interceptor: 'dns', path: '/small', expectBytes: 12, title: 'localhost through dns' },
  'dns-off': { ...THROUGHPUT, agent: true, host: 'localhost', path: '/small', expectBytes: 12, title: 'localhost without dns' },
  // As `small` through an Agent (same address): its cost over `small` is the Agent's per-request routing.
  agent: { ...THROUGHPUT, agent: true, path: '/small', expectBytes: 12, title: 'Agent to 127.0.0.1, small body' },
  // As `agent` with maxGlobalConnections equal to the Pool's connections (never reached): the cap's
  // own cost per request (ferro only; undici has no cap).
  'agent-cap': { ...THROUGHPUT, agent: true, ferroOnly: true, noFetch: true, maxGlobalConnections: 50, path: '/small', expectBytes: 12, title: 'Agent with maxGlobalConnections: 50' },
  // One request at a time for one cacheable URL: after the first, every request is a cache hit.
  // The memory store's hit against RedisCacheStore's (a redis-server on loopback; ferro only).
  'cache-hit': { ...CACHE_HIT, title: 'cache hit, memory store' },
  'cache-hit-redis': { ...CACHE_HIT, redis: true, ferroOnly: true, title: 'cache hit, RedisCacheStore (loopback redis-server)' },
  latency: {
    mode: 'latency',
    noFetch: true,
    concurrency: 1,
    connections: 1,
    pipelining: 1,
    path: '/small',
    expectBytes: 12,
    title: '1 request in flight, 1 connection, small body',
  },
};
for (const s of opt.scenarios) if (!SCENARIOS[s]) throw new Error(`unknown scenario ${s}`);

/** A scenario's own contenders (WebSocket echo) or the ones chosen for the run. */
// A scenario's own contenders (WebSocket), or the run's, less those it leaves out.
function contendersOf(sc) {
  return (
    sc.contenders ??
    opt.contenders.filter(
      (c) =>
        // node:http has no interceptors; fetch brings its own decoding and is measured on plain scenarios.
        !(FETCH_CONTENDERS.includes(c) && (sc.noFetch || sc.interceptor)) &&
        !(c === 'node-http' && (sc.noNode || sc.interceptor)) &&
        !(sc.ferroOnly && !c.startsWith('ferro')),
    )
  );
}

// undici 8 needs Node >= 22.19; older Node gets the undici7 alias.
function nodeAtLeast(major, minor) {
  const [ma, mi] = process.versions.node.split('.').map(Number);
  return ma > major || (ma === major && mi >= minor);
}
const UNDICI_PKG = nodeAtLeast(22, 19) ? 'undici' : 'undici7';

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}
const undiciVersion = readJson(path.join(ROOT, 'node_modules', UNDICI_PKG, 'package.json'))?.version ?? 'not installed';
const ferroVersion = readJson(path.join(ROOT, 'package.json'))?.version ?? 'unknown';

// ----------------------------------------------------------------------------------------- processes

const children = new Set();
function killAll() {
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

function log(msg) {
  process.stderr.write(msg + '\n');
}

// A node process with an IPC channel, pinned to `cpus` through taskset when a list is given.
function forkNode(script, args, cpus, { execArgv, stdio, env = process.env }) {
  if (!cpus) return fork(script, args, { execArgv, stdio, env });
  return spawn('taskset', ['-c', cpus, process.execPath, ...execArgv, script, ...args], { stdio, env });
}

// A redis-server for the RedisCacheStore row, killed with the other children; { error } without one.
async function startRedis() {
  if (spawnSync('redis-server', ['--version']).status !== 0) return { error: 'redis-server is not installed' };
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  let out = '';
  for await (const chunk of child.stdout) if ((out += chunk).includes('Ready to accept connections')) break;
  child.stdout.resume();
  if (child.exitCode !== null) return { error: `redis-server exited: ${out.slice(-500)}` };
  log(`redis-server on port ${port}`);
  return { url: `redis://127.0.0.1:${port}` };
}

function startServer() {
  return new Promise((resolve, reject) => {
    const child = forkNode(path.join(BENCH_DIR, 'server.mjs'), [], opt.serverCpus, {
      execArgv: ['--max-semi-space-size=16'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_SERVER_WORKERS: String(opt.serverWorkers) },
    });
    children.add(child);
    const timer = setTimeout(() => reject(new Error('server did not start within 10 s')), 10_000);
    const pending = new Map();
    let nextId = 0;
    child.on('message', (msg) => {
      if (msg?.type === 'ready') {
        clearTimeout(timer);
        resolve({
          port: msg.port,
          httpsPort: msg.httpsPort,
          h2Port: msg.h2Port,
          // The server's own CPU counter, to see whether it was the bottleneck in a window.
          cpu() {
            return new Promise((res) => {
              const id = nextId++;
              const t = setTimeout(() => {
                pending.delete(id);
                res(null);
              }, 2000);
              pending.set(id, (usage) => {
                clearTimeout(t);
                res(usage);
              });
              child.send({ type: 'cpu', id });
            });
          },
          stop() {
            children.delete(child);
            child.kill('SIGKILL');
          },
        });
      } else if (msg?.type === 'cpu') {
        pending.get(msg.id)?.(msg.usage);
        pending.delete(msg.id);
      }
    });
    child.on('exit', (code, signal) => {
      children.delete(child);
      clearTimeout(timer);
      reject(new Error(`server exited early (code ${code}, signal ${signal})`));
    });
  });
}

// One turn: fork a client, collect its result, kill it if it hangs.
function runTurn(server, cfg, timeoutMs) {
  return new Promise((resolve) => {
    const child = forkNode(path.join(BENCH_DIR, 'client.mjs'), [JSON.stringify(cfg)], opt.clientCpus, {
      env: cfg.driver === null ? process.env : { ...process.env, FERRO_ENGINE: cfg.driver },
      execArgv: [],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    let result = null;
    let timedOut = false;
    const marks = {};
    child.on('message', (msg) => {
      if (msg?.type === 'result') result = msg;
      else if (msg?.type === 'mark') marks[msg.phase] = server.cpu();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', async (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      if (timedOut && !result) {
        result = { ok: false, contender: cfg.contender, error: `timed out after ${Math.round(timeoutMs / 1000)} s (killed)` };
      } else if (!result) {
        // Name the most telling stderr line (a Rust panic, a JS error, a V8 fatal error).
        const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
        const telling = lines.find((l) => /panicked|fatal|error|abort|segmentation/i.test(l)) ?? lines[0];
        result = {
          ok: false,
          contender: cfg.contender,
          error: `client exited (code ${code}, signal ${signal}) without a result${telling ? `: ${telling}` : ''}`,
          stderr,
        };
      }
      if (result.ok && marks.start && marks.end) {
        const [a, b] = await Promise.all([marks.start, marks.end]);
        if (a && b && result.completed) {
          result.serverCpuUsPerReq = (b.user - a.user + b.system - a.system) / result.completed;
        }
      }
      delete result.type;
      resolve(result);
    });
  });
}

// ----------------------------------------------------------------------------------------- report

const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
const fmt1 = (n) => (n == null ? '–' : n.toFixed(1));
const fmtMb = (kb) => (kb == null ? '–' : (kb / 1024).toFixed(0));
const ratio = (a, b) => (a == null || b == null || !b ? '–' : `${(a / b).toFixed(2)}×`);

function pickMedian(rounds, key) {
  const ok = rounds.filter((r) => r.ok);
  if (!ok.length) return rounds[0] ?? null;
  const sorted = [...ok].sort((a, b) => key(a) - key(b));
  // The median round; with an even count the lower middle one (the more conservative).
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function errorCell(r) {
  let msg = String(r?.error ?? 'no result').replace(/\s+/g, ' ');
  if (msg.length > 100) msg = msg.slice(0, 99) + '…'; // full text under Errors
  return `error: ${msg.replace(/\|/g, '\\|')}`;
}

function throughputTable(results) {
  const lines = [
    '| scenario | contender | req/s | MB/s (body) | CPU µs/req | RSS MB | req/s vs undici | CPU vs undici |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, sc] of Object.entries(results)) {
    if (SCENARIOS[name].mode !== 'throughput' || name === 'memory') continue;
    for (const c of sc.contenders) {
      const r = sc.median[c];
      if (r === null && sc.rounds[c].length === 0) continue; // did not take part
      if (!r?.ok) {
        lines.push(`| ${name} | ${c} | ${errorCell(r)} | | | | |`);
        continue;
      }
      const base = sc.median[BASELINE[c]];
      const b = base?.ok ? base : null;
      lines.push(
        `| ${name} | ${c} | ${fmtInt(r.reqPerSec)} | ${fmt1((r.reqPerSec * SCENARIOS[name].expectBytes) / 1e6)} | ${fmt1(r.cpuUsPerReq)} | ${fmtMb(r.maxRssKb)} | ${ratio(r.reqPerSec, b?.reqPerSec)} | ${ratio(r.cpuUsPerReq, b?.cpuUsPerReq)} |`,
      );
    }
  }
  return lines.join('\n');
}

function memoryTable(sc) {
  const lines = ['| contender | peak RSS MB | req/s | RSS vs undici |', '|---|---:|---:|---:|'];
  for (const c of sc.contenders) {
    const r = sc.median[c];
    if (!r?.ok) {
      lines.push(`| ${c} | ${errorCell(r)} | | |`);
      continue;
    }
    const base = sc.median[BASELINE[c]];
    lines.push(`| ${c} | ${fmtMb(r.maxRssKb)} | ${fmtInt(r.reqPerSec)} | ${ratio(r.maxRssKb, base?.ok ? base.maxRssKb : null)} |`);
  }
  return lines.join('\n');
}

function latencyTable(sc) {
  const lines = [
    '| contender | p50 µs | p99 µs | mean µs | CPU µs/req | p50 vs undici | p99 vs undici |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of sc.contenders) {
    const r = sc.median[c];
    if (!r?.ok) {
      lines.push(`| ${c} | ${errorCell(r)} | | | | | |`);
      continue;
    }
    const base = sc.median[BASELINE[c]];
    const b = base?.ok ? base.latency : null;
    const l = r.latency;
    lines.push(
      `| ${c} | ${fmt1(l.p50)} | ${fmt1(l.p99)} | ${fmt1(l.mean)} | ${fmt1(r.cpuUsPerReq)} | ${ratio(l.p50, b?.p50)} | ${ratio(l.p99, b?.p99)} |`,
    );
  }
  return lines.join('\n');
}

// ----------------------------------------------------------------------------------------- main

async function main() {
  const cpus = os.cpus();
  const machine = {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAvgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.versions.node,
    undici: { package: UNDICI_PKG, version: undiciVersion },
    ferro: { version: ferroVersion, built: fs.existsSync(FERRO_ENTRY) },
  };

  const out = [];
  out.push('# ferro benchmark', '');
  out.push(`- machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}`);
  out.push(`- load average at start: ${machine.loadAvgAtStart.join(', ')} (other load on the machine skews req/s)`);
  out.push(`- node: v${machine.node}`);
  out.push(`- undici: ${undiciVersion} (package \`${UNDICI_PKG}\`, chosen for Node ${process.versions.node})`);
  const entry = path.relative(ROOT, FERRO_ENTRY);
  out.push(`- ferro: ${ferroVersion}, ${entry}${machine.ferro.built ? '' : ' missing (not built)'}`);
  out.push(
    `- settings: ${opt.seconds} s measured after ${opt.warmup} s warm-up per turn, ${opt.rounds} round(s), ` +
      `median round shown; throughput: 100 in flight, Pool 50 connections × pipelining 10; ` +
      `new-connections: 10 in flight, Pool 10 connections, reset: true (one TLS connection per request); ` +
      `latency: ${opt.latencyRequests} sequential requests on 1 connection`,
  );
  out.push(
    opt.serverCpus || opt.clientCpus
      ? `- placement: separate cores — server on CPUs ${opt.serverCpus ?? 'any'}, client on CPUs ${opt.clientCpus ?? 'any'}`
      : '- placement: co-located (server and client share every core)',
  );
  if (opt.serverWorkers > 1) out.push(`- server: node:cluster of ${opt.serverWorkers} processes`);
  if (opt.quick) out.push('- **quick run**: smoke test only, numbers are noisy');
  // Print the header now so a long run shows what it is doing.
  process.stdout.write(out.join('\n') + '\n\n');

  const server = await startServer();
  const origin = `http://127.0.0.1:${server.port}`;
  const secureOrigin = `https://127.0.0.1:${server.httpsPort}`;
  const h2Origin = `https://127.0.0.1:${server.h2Port}`;
  log(`server on ${origin} and ${secureOrigin}`);

  const ferroUrl = pathToFileURL(FERRO_ENTRY).href;
  const results = {};
  let redis = null;
  for (const name of opt.scenarios) {
    const sc = SCENARIOS[name];
    const contenders = contendersOf(sc);
    const rounds = Object.fromEntries(contenders.map((c) => [c, []]));
    if (sc.redis) redis ??= await startRedis();
    for (let round = 0; round < opt.rounds && !(sc.redis && redis.error); round++) {
      // Rotate the order each round so no contender always runs first or last.
      const k = round % contenders.length;
      const order = [...contenders.slice(k), ...contenders.slice(0, k)];
      for (const contender of order) {
        const cfg = {
          contender: driverOf(contender) === null ? contender : contender.replace(/-(inline|threaded)-/, '-'),
          driver: driverOf(contender),
          origin: sc.h2 ? h2Origin : sc.secure ? secureOrigin : sc.host ? origin.replace('127.0.0.1', sc.host) : origin,
          h2: sc.h2 === true,
          agent: sc.agent === true,
          maxGlobalConnections: sc.maxGlobalConnections ?? null,
          caFile: sc.secure ? CA_FILE : null,
          reset: sc.reset === true,
          maxCachedSessions: sc.maxCachedSessions ?? null,
          path: sc.path,
          expectBytes: sc.expectBytes,
          mode: sc.mode,
          concurrency: sc.concurrency,
          connections: sc.connections,
          pipelining: sc.pipelining,
          warmupMs: opt.warmup * 1000,
          durationMs: opt.seconds * 1000,
          requests: opt.latencyRequests,
          undiciPkg: UNDICI_PKG,
          ferroUrl,
          interceptor: sc.interceptor ?? null,
          withOrigin: sc.withOrigin === true,
          yieldEach: sc.yieldEach === true,
          redisUrl: sc.redis ? redis.url : null,
        };
        const timeoutMs =
          sc.mode === 'latency'
            ? 30_000 + opt.latencyRequests * 20 // 20 ms per request is far beyond any sane latency
            : (opt.warmup + opt.seconds) * 1000 + 20_000;
        const r = await runTurn(server, cfg, timeoutMs);
        r.round = round;
        rounds[contender].push(r);
        const summary = r.ok
          ? sc.mode === 'latency'
            ? `p50 ${fmt1(r.latency.p50)} µs, p99 ${fmt1(r.latency.p99)} µs`
            : `${fmtInt(r.reqPerSec)} req/s, ${fmt1(r.cpuUsPerReq)} µs CPU/req`
          : `error: ${r.error}`;
        const serverCpu = r.serverCpuUsPerReq != null ? ` [server ${fmt1(r.serverCpuUsPerReq)} µs CPU/req]` : '';
        log(`[${name}] round ${round + 1}/${opt.rounds} ${contender}: ${summary}${serverCpu}${r.errors ? ` (${r.errors} errors)` : ''}`);
      }
    }
    if (sc.redis && redis.error) for (const c of contenders) rounds[c].push({ ok: false, contender: c, error: redis.error, round: 0 });
    const median = {};
    const key = sc.mode === 'latency' ? (r) => r.latency.p50 : name === 'memory' ? (r) => r.maxRssKb : (r) => -r.reqPerSec;
    for (const c of contenders) median[c] = pickMedian(rounds[c], key);
    results[name] = { ...sc, contenders, rounds, median };
  }
  server.stop();

  const report = [];
  if (Object.values(results).some((s) => s.mode === 'throughput')) {
    report.push('## Throughput', '', throughputTable(results), '');
  }
  for (const [name, sc] of Object.entries(results)) {
    if (sc.mode === 'latency') report.push(`## Latency: ${SCENARIOS[name].title}`, '', latencyTable(sc), '');
  }
  if (results.memory) report.push(`## Memory: ${SCENARIOS.memory.title}`, '', memoryTable(results.memory), '');
  report.push(
    'Ratios compare with undici\'s same API (ferro-request and node-http vs undici-request, ferro-dispatch vs ' +
      'undici-dispatch): req/s above 1.00× is faster, CPU and latency below 1.00× are better.',
    '',
  );

  // Errors and warnings from every turn, not only the median ones; identical messages grouped.
  const notes = new Map();
  const note = (msg, where) => notes.set(msg, [...(notes.get(msg) ?? []), where]);
  for (const [name, sc] of Object.entries(results)) {
    for (const c of sc.contenders) {
      for (const r of sc.rounds[c]) {
        const where = `${name}/${c}${opt.rounds > 1 ? `#${r.round + 1}` : ''}`;
        if (!r.ok) note(r.error, where);
        else {
          if (r.errors) note(`${r.errors} failed requests in the window; first: ${r.firstError}`, where);
          if (r.undrained) note(`${r.undrained} requests still in flight 5 s after the window`, where);
        }
      }
    }
  }
  if (notes.size) {
    report.push('## Errors', '', ...[...notes].map(([msg, where]) => `- ${msg} (${where.join(', ')})`), '');
  }
  process.stdout.write(report.join('\n'));

  // Keep every round in the JSON, but not the full latency sample of every turn twice.
  const json = {
    date: new Date().toISOString(),
    machine: { ...machine, loadAvgAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    options: opt,
    scenarios: Object.fromEntries(
      Object.entries(results).map(([name, sc]) => [
        name,
        {
          ...sc,
          median: Object.fromEntries(Object.entries(sc.median).map(([c, r]) => [c, r ? { round: r.round, ok: r.ok } : null])),
        },
      ]),
    ),
  };
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(RESULTS_FILE, JSON.stringify(json, null, 2) + '\n');
  log(`results written to ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

main().then(
  () => {
    killAll();
    process.exit(0);
  },
  (err) => {
    log(`bench failed: ${err?.stack ?? err}`);
    killAll();
    process.exit(1);
  },
);
