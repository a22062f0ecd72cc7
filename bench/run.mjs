// Benchmark orchestrator: `npm run bench` / `node bench/run.mjs [options]`.
//
// Starts the server (bench/server.mjs, or crates/bench-server with --server=rust) in its own process,
// then for every scenario runs every contender in turn, each turn in a fresh bench/client.mjs process,
// rounds interleaved with the contender order rotated. Prints a Markdown report on stdout (progress
// goes to stderr) and writes bench/results/latest.json.
//
// Options (flags win over environment):
//   --quick                  ~1 s smoke run (1 round, short windows, fewer latency samples)
//   --seconds=N              measured window per turn        (env BENCH_SECONDS, default 5)
//   --warmup=N               warm-up seconds per turn        (env BENCH_WARMUP, default 1)
//   --rounds=N               rounds per scenario             (env BENCH_ROUNDS, default 2)
//   --latency-requests=N     timed requests, latency mode    (env BENCH_LATENCY_REQUESTS, default 3000)
//   --contenders=a,b         contenders instead of each scenario's (env BENCH_CONTENDERS): <lib>-<api>
//                            for lib ferro / undici and api request, request-text, request-dump,
//                            request-iter, stream, dispatch, fetch (bench/scenarios.mjs); node-http;
//                            ferro-inline-<api> / ferro-threaded-<api> (that engine driver, whatever
//                            FERRO_ENGINE says); ferro-bridged; the *-interceptors pair
//   --scenarios=a,b          subset of DEFAULT_SCENARIOS in bench/scenarios.mjs (env BENCH_SCENARIOS)
//   --server=node,rust       which server(s) to run against (default both): node is node:http, the
//                            realistic case; rust is crates/bench-server (built when missing), so
//                            that the client is the bottleneck. The Rust server serves plain HTTP/1.1
//                            only, and runs RUST_SCENARIOS unless --scenarios names them
//   --rust-threads=N         the Rust server's threads (default 1)
//   --perf                   one more turn per contender under perf stat, N-API and heap counters:
//                            the "Where the time goes" table (bench/perf.mjs)
//   --server-cpus=LIST       pin the server to these CPUs (taskset list, e.g. 0 or 0-7)
//   --client-cpus=LIST       pin every client turn to these CPUs (e.g. 1 or 8,9)
//   --server-workers=N       run the node server as a node:cluster of N processes (default 1)
// Environment only:
//   BENCH_FERRO=path         ferro entry module to load instead of dist/index.js
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { perfSetup, perfTurn } from './perf.mjs';
import { forkNode, killAll, log } from './processes.mjs';
import { fmt1, fmtInt, pickMedian, renderReport } from './report.mjs';
import {
  ALL_CONTENDERS,
  CA_FILE,
  DEFAULT_CONTENDERS,
  DEFAULT_SCENARIOS,
  RUST_SCENARIOS,
  SCENARIOS,
  contendersOf,
  driverOf,
  ownServer,
  rustServes,
} from './scenarios.mjs';
import { startH3Server, startNodeServer, startRedis, startRustServer } from './servers.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
// BENCH_FERRO may point at another build of ferro (a file path to its entry module).
const FERRO_ENTRY = path.resolve(process.env.BENCH_FERRO ?? path.join(ROOT, 'dist', 'index.js'));
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'latest.json');

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

function cpuList(value, name) {
  if (value == null) return null;
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(String(value))) throw new Error(`${name} must be a CPU list such as 0 or 0-3,8, got ${value}`);
  return String(value);
}

const args = parseArgs(process.argv.slice(2));
const env = process.env;
const quick = args.quick === true;
const namedContenders = args.contenders ?? env.BENCH_CONTENDERS;
const namedScenarios = args.scenarios ?? env.BENCH_SCENARIOS;
const opt = {
  quick,
  seconds: num(args.seconds ?? env.BENCH_SECONDS ?? (quick ? 1 : 5), 'seconds'),
  warmup: num(args.warmup ?? env.BENCH_WARMUP ?? (quick ? 0.5 : 1), 'warmup'),
  rounds: Math.round(num(args.rounds ?? env.BENCH_ROUNDS ?? (quick ? 1 : 2), 'rounds')),
  latencyRequests: Math.round(
    num(args['latency-requests'] ?? env.BENCH_LATENCY_REQUESTS ?? (quick ? 500 : 3000), 'latency-requests'),
  ),
  contenders: list(namedContenders ?? DEFAULT_CONTENDERS.join(',')),
  scenarios: list(namedScenarios ?? DEFAULT_SCENARIOS.join(',')),
  servers: list(args.server ?? 'node,rust'),
  rustThreads: Math.round(num(args['rust-threads'] ?? 1, 'rust-threads')),
  perf: args.perf === true,
  serverCpus: cpuList(args['server-cpus'], 'server-cpus'),
  clientCpus: cpuList(args['client-cpus'], 'client-cpus'),
  serverWorkers: Math.round(num(args['server-workers'] ?? 1, 'server-workers')),
};
if ((opt.serverCpus || opt.clientCpus) && spawnSync('taskset', ['-V']).status !== 0) {
  throw new Error('--server-cpus / --client-cpus need taskset (util-linux)');
}
for (const c of opt.contenders) if (!ALL_CONTENDERS.includes(c)) throw new Error(`unknown contender ${c}`);
for (const s of opt.scenarios) if (!SCENARIOS[s]) throw new Error(`unknown scenario ${s}`);
for (const s of opt.servers) if (s !== 'node' && s !== 'rust') throw new Error(`--server must be node, rust or node,rust, got ${s}`);

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

// ----------------------------------------------------------------------------------------- turns

// One turn: fork a client (behind perf stat for a perf turn), collect its result, kill it if it hangs.
function runTurn(server, cfg, timeoutMs, perf = null) {
  return new Promise((resolve) => {
    const child = forkNode(path.join(BENCH_DIR, 'client.mjs'), [JSON.stringify(cfg)], {
      cpus: opt.clientCpus,
      wrapper: perf?.wrapper ?? [],
      env: cfg.driver === null ? process.env : { ...process.env, FERRO_ENGINE: cfg.driver },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
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
      if (perf) result.perfCounts = perf.collect();
      delete result.type;
      resolve(result);
    });
  });
}

/** The client's config for one turn of `contender` in scenario `sc` against `server`. */
function turnConfig(sc, contender, server, redis) {
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    contender: driverOf(contender) === null ? contender : contender.replace(/-(inline|threaded)-/, '-'),
    driver: driverOf(contender),
    origin: sc.h3Server
      ? `https://localhost:${server.port}`
      : sc.h2
        ? `https://127.0.0.1:${server.h2Port}`
        : sc.secure
          ? `https://127.0.0.1:${server.httpsPort}`
          : sc.host
            ? origin.replace('127.0.0.1', sc.host)
            : origin,
    h2: sc.h2 === true,
    h2c: sc.h2c === true,
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
    h1Connections: sc.h1Connections ?? null,
    pipelining: sc.pipelining,
    blocking: sc.blocking ?? null,
    warmupMs: opt.warmup * 1000,
    durationMs: opt.seconds * 1000,
    requests: opt.latencyRequests,
    undiciPkg: UNDICI_PKG,
    ferroUrl: pathToFileURL(FERRO_ENTRY).href,
    interceptor: sc.interceptor ?? null,
    withOrigin: sc.withOrigin === true,
    yieldEach: sc.yieldEach === true,
    redisUrl: sc.redis ? redis.url : null,
    perf: null,
  };
}

// Every round of every contender of one scenario (and its perf turns with --perf).
async function runScenario(name, sc, server, serverName, redis, perfSetupResult) {
  const contenders = contendersOf(sc, opt.contenders, namedContenders !== undefined);
  const rounds = Object.fromEntries(contenders.map((c) => [c, []]));
  const label = serverName === 'node' ? name : `${name} (rust)`;
  const timeoutMs =
    sc.mode === 'latency'
      ? 30_000 + opt.latencyRequests * 20 // 20 ms per request is far beyond any sane latency
      : (opt.warmup + opt.seconds) * 1000 + 20_000;
  const summary = (r) =>
    r.ok
      ? sc.mode === 'latency'
        ? `p50 ${fmt1(r.latency.p50)} µs, p99 ${fmt1(r.latency.p99)} µs`
        : `${fmtInt(r.reqPerSec)} req/s, ${fmt1(r.cpuUsPerReq)} µs CPU/req`
      : `error: ${r.error}`;
  for (let round = 0; round < opt.rounds && !(sc.redis && redis.error); round++) {
    // Rotate the order each round so no contender always runs first or last.
    const k = round % contenders.length;
    const order = [...contenders.slice(k), ...contenders.slice(0, k)];
    for (const contender of order) {
      const r = await runTurn(server, turnConfig(sc, contender, server, redis), timeoutMs);
      r.round = round;
      rounds[contender].push(r);
      const serverCpu = r.serverCpuUsPerReq != null ? ` [server ${fmt1(r.serverCpuUsPerReq)} µs CPU/req]` : '';
      log(`[${label}] round ${round + 1}/${opt.rounds} ${contender}: ${summary(r)}${serverCpu}${r.errors ? ` (${r.errors} errors)` : ''}`);
    }
  }
  if (sc.redis && redis.error) for (const c of contenders) rounds[c].push({ ok: false, contender: c, error: redis.error, round: 0 });
  const median = {};
  const key = sc.mode === 'latency' ? (r) => r.latency.p50 : name === 'memory' ? (r) => r.maxRssKb : (r) => -r.reqPerSec;
  for (const c of contenders) median[c] = pickMedian(rounds[c], key);

  let perf;
  if (opt.perf && !(sc.redis && redis.error)) {
    perf = {};
    for (const contender of contenders) {
      const cfg = turnConfig(sc, contender, server, redis);
      const turn = perfSetupResult.error ? null : perfTurn(perfSetupResult);
      cfg.perf = turn ? turn.cfg : { ctl: null };
      const r = await runTurn(server, cfg, timeoutMs + 15_000, turn);
      perf[contender] = r;
      log(`[${label}] perf ${contender}: ${summary(r)}`);
    }
  }
  return [label, { ...sc, name, server: serverName, contenders, rounds, median, perf }];
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
    `- server: ${opt.servers
      .map((s) => (s === 'node' ? `node:http${opt.serverWorkers > 1 ? ` (node:cluster of ${opt.serverWorkers} processes)` : ''}` : `crates/bench-server, ${opt.rustThreads} thread(s) (rows marked "(rust)")`))
      .join('; ')}${opt.scenarios.some((n) => ownServer(SCENARIOS[n])) ? '; h3 rows: crates/h3-test-server --bench, one thread' : ''}`,
  );
  out.push(
    opt.serverCpus || opt.clientCpus
      ? `- placement: separate cores — server on CPUs ${opt.serverCpus ?? 'any'}, client on CPUs ${opt.clientCpus ?? 'any'}`
      : '- placement: co-located (server and client share every core)',
  );
  if (opt.quick) out.push('- **quick run**: smoke test only, numbers are noisy');
  // Print the header now so a long run shows what it is doing.
  process.stdout.write(out.join('\n') + '\n\n');

  const perfSetupResult = opt.perf ? perfSetup() : null;
  if (perfSetupResult?.error) log(`--perf: ${perfSetupResult.error}; only N-API and heap counts are taken`);

  const results = {};
  const skipped = [];
  let redis = null;
  // The h3 rows run against their own server (crates/h3-test-server) whatever --server says.
  for (const serverName of [...opt.servers, 'h3']) {
    const scenarios = opt.scenarios.filter((name) =>
      serverName === 'h3'
        ? ownServer(SCENARIOS[name]) === 'h3'
        : serverName === 'node'
          ? !SCENARIOS[name].rustOnly && !ownServer(SCENARIOS[name])
          : rustServes(SCENARIOS[name]) && (namedScenarios !== undefined || RUST_SCENARIOS.includes(name)),
    );
    if (!scenarios.length) continue;
    let server;
    try {
      server =
        serverName === 'node'
          ? await startNodeServer({ cpus: opt.serverCpus, workers: opt.serverWorkers })
          : serverName === 'h3'
            ? await startH3Server({ cpus: opt.serverCpus })
            : await startRustServer({ cpus: opt.serverCpus, threads: opt.rustThreads });
    } catch (err) {
      // Without a Rust toolchain (or a built binary) the node rows still run.
      if (serverName === 'node') throw err;
      skipped.push(`the ${serverName === 'h3' ? 'h3 test' : 'Rust'} server's rows are missing: ${err.message}`);
      log(skipped.at(-1));
      continue;
    }
    log(`${serverName} server on port ${server.port}`);
    for (const name of scenarios) {
      const sc = SCENARIOS[name];
      if (sc.redis) redis ??= await startRedis();
      const [label, result] = await runScenario(name, sc, server, serverName, redis, perfSetupResult);
      results[label] = result;
    }
    server.stop();
  }
  perfSetupResult?.cleanup?.();

  const perfNote = perfSetupResult?.error
    ? `perf unavailable (${perfSetupResult.error}): syscall, context-switch and malloc columns are empty.`
    : 'One extra turn per contender, counted over its measured window: syscalls and context switches (all threads) ' +
      'from perf stat, libc malloc calls from a uprobe, JS heap bytes from v8.GCProfiler, N-API crossings ' +
      '(in: JS calling the binding; out: the binding calling JS) from wrappers around the binding.';
  const report = renderReport(results, { perfNote });

  // Errors and warnings from every turn, not only the median ones; identical messages grouped.
  const notes = new Map();
  const note = (msg, where) => notes.set(msg, [...(notes.get(msg) ?? []), where]);
  for (const [name, sc] of Object.entries(results)) {
    for (const c of sc.contenders) {
      for (const r of [...sc.rounds[c], ...(sc.perf?.[c] ? [{ ...sc.perf[c], round: 'perf' }] : [])]) {
        const where = `${name}/${c}${opt.rounds > 1 || r.round === 'perf' ? `#${r.round === 'perf' ? 'perf' : r.round + 1}` : ''}`;
        if (!r.ok) note(r.error, where);
        else {
          if (r.errors) note(`${r.errors} failed requests in the window; first: ${r.firstError}`, where);
          if (r.undrained) note(`${r.undrained} requests still in flight 5 s after the window`, where);
        }
      }
    }
  }
  for (const msg of skipped) note(msg, 'run');
  if (notes.size) {
    report.push('## Errors', '', ...[...notes].map(([msg, where]) => `- ${msg} (${where.join(', ')})`), '');
  }
  const loadAvgAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  report.push(`Load average at the end: ${loadAvgAtEnd.join(', ')}.`, '');
  process.stdout.write(report.join('\n'));

  // Keep every round in the JSON, but not the full latency sample of every turn twice.
  const json = {
    date: new Date().toISOString(),
    machine: { ...machine, loadAvgAtEnd },
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
