// How ferro's throughput and CPU change with the engine driver and the threaded driver's worker
// threads (FERRO_ENGINE_THREADS), per placement of server and client on the CPUs (taskset), with
// each request's CPU split into the JS thread's, the engine threads' and the rest's
// (bench/thread-cpu.mjs). docs/performance/threads.md has the results and what they mean.
//
//   node bench/engine-threads.mjs [--server=rust|node] [--scenarios=small,h2c] [--apis=request,dispatch]
//     [--threads=1,2] [--placements=shared,0/1] [--seconds=3] [--warmup=1] [--rounds=2]
//
// A placement is `shared` (no pinning) or `<server cpus>/<client cpus>` in taskset's list syntax,
// e.g. `0/1` or `0-3/4-7`. Every variant (inline, then threaded with each thread count) runs once
// per round, the order rotating; the table shows medians. BENCH_FERRO as in run.mjs.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { forkNode, log } from './processes.mjs';
import { CA_FILE, SCENARIOS } from './scenarios.mjs';
import { startNodeServer, startRustServer } from './servers.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const FERRO_ENTRY = path.resolve(process.env.BENCH_FERRO ?? path.join(BENCH_DIR, '..', 'dist', 'index.js'));
const UNDICI_PKG = 'undici7'; // unused by ferro contenders; client.mjs wants a name

const { values: args } = parseArgs({
  options: {
    server: { type: 'string', default: 'rust' },
    scenarios: { type: 'string' },
    apis: { type: 'string', default: 'request,dispatch' },
    threads: { type: 'string', default: '1,2' },
    placements: { type: 'string', default: 'shared,0/1' },
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '2' },
  },
});
const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const positive = (s, name) => {
  const n = Number(s);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number, got ${s}`);
  return n;
};
if (args.server !== 'rust' && args.server !== 'node') throw new Error('--server must be rust or node');
const scenarios = list(args.scenarios ?? (args.server === 'rust' ? 'small,h2c' : 'small,h2'));
for (const s of scenarios) if (!SCENARIOS[s]) throw new Error(`unknown scenario ${s}`);
const threadCounts = list(args.threads).map((t) => Math.round(positive(t, 'threads')));
const placements = list(args.placements).map((p) => {
  if (p === 'shared') return { name: 'shared', server: null, client: null };
  const m = /^([\d,-]+)\/([\d,-]+)$/.exec(p);
  if (!m) throw new Error(`placement ${p}: expected shared or <server cpus>/<client cpus>`);
  return { name: p, server: m[1], client: m[2] };
});
if (placements.some((p) => p.server) && spawnSync('taskset', ['-V']).status !== 0) throw new Error('placements need taskset (util-linux)');
const seconds = positive(args.seconds, 'seconds');
const warmup = positive(args.warmup, 'warmup');
const rounds = Math.round(positive(args.rounds, 'rounds'));
const variants = [{ name: 'inline', env: { FERRO_ENGINE: 'inline' } }].concat(
  threadCounts.map((t) => ({ name: `threaded ×${t}`, env: { FERRO_ENGINE: 'threaded', FERRO_ENGINE_THREADS: String(t) } })),
);

function turn(server, sc, api, variant, clientCpus) {
  const cfg = {
    contender: `ferro-${api}`,
    origin: sc.h2 ? `https://127.0.0.1:${server.h2Port}` : sc.secure ? `https://127.0.0.1:${server.httpsPort}` : `http://127.0.0.1:${server.port}`,
    h2: sc.h2 === true,
    h2c: sc.h2c === true,
    caFile: sc.secure ? CA_FILE : null,
    path: sc.path,
    expectBytes: sc.expectBytes,
    mode: 'throughput',
    concurrency: sc.concurrency,
    connections: sc.connections,
    pipelining: sc.pipelining,
    blocking: sc.blocking ?? null,
    warmupMs: warmup * 1000,
    durationMs: seconds * 1000,
    undiciPkg: UNDICI_PKG,
    ferroUrl: pathToFileURL(FERRO_ENTRY).href,
    perf: null,
  };
  return new Promise((resolve) => {
    const child = forkNode(path.join(BENCH_DIR, 'client.mjs'), [JSON.stringify(cfg)], {
      cpus: clientCpus,
      env: { ...process.env, ...variant.env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let result = { ok: false, error: 'client exited without a result' };
    child.on('message', (msg) => {
      if (msg?.type === 'result') result = msg;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (warmup + seconds) * 1000 + 20_000);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(result);
    });
  });
}

const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};
const fmt = (x, digits = 1) => (x == null ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

const out = [
  `ferro ${FERRO_ENTRY}, Node ${process.versions.node}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  `server ${args.server}, ${seconds} s windows after ${warmup} s warm-up, medians of ${rounds} rounds`,
  '',
  '| placement (server/client CPUs) | scenario | API | driver | req/s | CPU µs/req | JS thread | engine threads | other threads |',
  '|---|---|---|---|---:|---:|---:|---:|---:|',
];
for (const placement of placements) {
  const server = args.server === 'rust' ? await startRustServer({ cpus: placement.server, threads: 1 }) : await startNodeServer({ cpus: placement.server, workers: 1 });
  try {
    for (const name of scenarios) {
      const sc = SCENARIOS[name];
      for (const api of list(args.apis)) {
        const results = new Map(variants.map((v) => [v.name, []]));
        for (let round = 0; round < rounds; round++) {
          for (let i = 0; i < variants.length; i++) {
            const v = variants[(i + round) % variants.length];
            const r = await turn(server, sc, api, v, placement.client);
            log(`${placement.name} ${name} ${api} ${v.name}: ${r.ok ? `${Math.round(r.reqPerSec)} req/s, ${r.cpuUsPerReq.toFixed(1)} µs/req` : r.error}`);
            if (r.ok) results.get(v.name).push(r);
          }
        }
        for (const v of variants) {
          const rs = results.get(v.name);
          const per = (kind) => median(rs.map((r) => (r.threadCpuUs ? r.threadCpuUs[kind] / r.completed : null)));
          out.push(
            `| ${placement.name} | ${name} | ${api} | ${v.name} | ${fmt(median(rs.map((r) => r.reqPerSec)), 0)} | ${fmt(median(rs.map((r) => r.cpuUsPerReq)))} | ${fmt(per('js'))} | ${fmt(per('engine'))} | ${fmt(per('other'))} |`,
          );
        }
      }
    }
  } finally {
    server.stop();
  }
}
process.stdout.write(out.join('\n') + '\n');
process.exit(0);
