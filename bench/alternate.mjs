// Paired comparison in one client process: ferro's and undici's contenders take turns in short
// blocks (A B, B A, A B, …) against one server, and each ferro block is compared with the undici
// block next to it.
//
// Why: on this VM the whole machine drifts by 30–50 % over tens of seconds (the Rust server's own
// CPU per request moves with it), so the turns of `bench/run.mjs`, seconds apart, can disagree by
// more than the difference being measured. Blocks a fraction of a second apart see the same
// machine; the median of the per-pair ratios, with its interquartile range, is the number to quote.
// Both libraries live in one process (one heap, one event loop): each block pays some of the other's
// garbage, alternately, which is the price of the pairing. Complements run.mjs, does not replace it.
//
// Usage:
//   node bench/alternate.mjs [--api=dispatch,request] [--mode=latency|throughput] [--blocking=false]
//     [--server=rust|node] [--blocks=30] [--block=N] [--concurrency=100] [--warmup=2]
//     [--server-cpus=LIST] [--client-cpus=LIST]
// --api: the APIs to compare (bench/contenders.mjs names without the library: request, request-text,
// request-dump, request-iter, stream, dispatch); --block: requests per block (latency 2,000,
// throughput 20,000); BENCH_FERRO as for run.mjs.
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { forkNode, log } from './processes.mjs';
import { startNodeServer, startRustServer } from './servers.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');

function parseArgs(argv) {
  const out = {};
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument: ${a}`);
    out[m[1]] = m[2] ?? 'true';
  }
  return out;
}

// undici 8 needs Node 22.19 (as run.mjs decides).
function nodeAtLeast(major, minor) {
  const [a, b] = process.versions.node.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] : NaN;
};

// ---------------------------------------------------------------------------------------------------
// The client (a child process, so that it can be pinned apart from the server)
// ---------------------------------------------------------------------------------------------------

async function client(cfg) {
  const { makeContender } = await import('./contenders.mjs');
  const names = cfg.apis.flatMap((api) => [`ferro-${api}`, `undici-${api}`]);
  const contenders = new Map();
  for (const name of names) contenders.set(name, await makeContender({ ...cfg.base, contender: name }));

  const check = (err, status, bytes) => {
    if (err) throw err;
    if (status !== 200 || bytes !== cfg.base.expectBytes) throw new Error(`bad response: ${status}, ${bytes} B`);
  };
  const one = (c) => new Promise((resolve, reject) => c.issue((err, status, bytes) => {
    try {
      check(err, status, bytes);
      resolve();
    } catch (e) {
      reject(e);
    }
  }));

  // One block of `n` requests; latency: one at a time, each timed; throughput: `concurrency` in
  // flight until n have completed, then drained (the next block must not overlap it).
  async function block(c, n, samples) {
    if (cfg.mode === 'latency') {
      for (let i = 0; i < n; i++) {
        const s = process.hrtime.bigint();
        await one(c);
        if (samples) samples.push(Number(process.hrtime.bigint() - s) / 1000);
      }
      return;
    }
    await new Promise((resolve, reject) => {
      let started = 0;
      let done = 0;
      const launch = () => {
        started++;
        c.issue((err, status, bytes) => {
          try {
            check(err, status, bytes);
          } catch (e) {
            reject(e);
            return;
          }
          if (++done === n) resolve();
          else if (started < n) launch();
        });
      };
      for (let i = 0; i < Math.min(cfg.concurrency, n); i++) launch();
    });
  }

  // Warm-up: every contender, in turn, for about cfg.warmupMs each.
  for (const c of contenders.values()) {
    const end = Date.now() + cfg.warmupMs;
    while (Date.now() < end) await block(c, Math.max(50, cfg.block / 20), null);
  }

  const results = Object.fromEntries(names.map((n) => [n, { cpu: [], rate: [], samples: [], tails: [] }]));
  for (let b = 0; b < cfg.blocks; b++) {
    for (const api of cfg.apis) {
      const order = b % 2 === 0 ? [`ferro-${api}`, `undici-${api}`] : [`undici-${api}`, `ferro-${api}`];
      for (const name of order) {
        const r = results[name];
        const samples = cfg.mode === 'latency' ? [] : null;
        const cpu0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        await block(contenders.get(name), cfg.block, samples);
        const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        r.cpu.push((cpu.user + cpu.system) / cfg.block);
        r.rate.push((cfg.block / wallUs) * 1e6);
        if (samples) {
          r.samples.push(median(samples));
          r.tails.push(quantile(samples, 0.99));
        }
      }
    }
  }
  for (const c of contenders.values()) await c.close();
  return results;
}

// ---------------------------------------------------------------------------------------------------
// The orchestrator
// ---------------------------------------------------------------------------------------------------

function report(cfg, results, load0, load1) {
  const f1 = (x) => x.toFixed(1);
  const f2 = (x) => x.toFixed(2);
  const lines = [
    `# Paired blocks: ferro vs undici (${cfg.mode}${cfg.base.blocking === false ? ', blocking: false' : ''}, ${cfg.serverKind} server)`,
    '',
    `- ${cfg.blocks} block pairs of ${cfg.block} requests per API, order alternating; ` +
      (cfg.mode === 'latency' ? '1 request in flight, 1 connection' : `${cfg.concurrency} in flight, Pool ${cfg.base.connections} × ${cfg.base.pipelining}`),
    `- placement: ${cfg.serverCpus || cfg.clientCpus ? `server on CPUs ${cfg.serverCpus ?? 'any'}, client on ${cfg.clientCpus ?? 'any'}` : 'co-located (unpinned)'}; ` +
      `load average ${load0.map(f2).join(', ')} at the start, ${load1.map(f2).join(', ')} at the end`,
    `- ratio columns: median over the block pairs of ferro ÷ undici (interquartile range in brackets)`,
    '',
  ];
  const valueName = cfg.mode === 'latency' ? 'p50 µs' : 'req/s';
  const latency = cfg.mode === 'latency';
  lines.push(
    `| API | ferro CPU µs/req | undici CPU µs/req | CPU ratio | ferro ${valueName} | undici ${valueName} | ${latency ? 'p50' : 'req/s'} ratio |` +
      (latency ? ' ferro p99 µs | undici p99 µs | p99 ratio |' : ''),
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|' + (latency ? '---:|---:|---:|' : ''));
  for (const api of cfg.apis) {
    const a = results[`ferro-${api}`];
    const b = results[`undici-${api}`];
    const pair = (xa, xb) => xa.map((x, i) => x / xb[i]);
    const span = (rs) => `${f2(median(rs))}× (${f2(quantile(rs, 0.25))}–${f2(quantile(rs, 0.75))})`;
    const [va, vb] = cfg.mode === 'latency' ? [a.samples, b.samples] : [a.rate, b.rate];
    lines.push(
      `| ${api} | ${f1(median(a.cpu))} | ${f1(median(b.cpu))} | ${span(pair(a.cpu, b.cpu))} | ` +
        `${cfg.mode === 'latency' ? f1(median(va)) : Math.round(median(va)).toLocaleString('en-US')} | ` +
        `${cfg.mode === 'latency' ? f1(median(vb)) : Math.round(median(vb)).toLocaleString('en-US')} | ${span(pair(va, vb))} |` +
        (latency ? ` ${f1(median(a.tails))} | ${f1(median(b.tails))} | ${span(pair(a.tails, b.tails))} |` : ''),
    );
  }
  if (latency) lines.push('', 'p50 / p99: each block\'s median and 99th percentile latency; the columns give the median of those.');
  return lines.join('\n');
}

async function main() {
  if (process.env.BENCH_ALTERNATE_CLIENT) {
    const cfg = JSON.parse(process.env.BENCH_ALTERNATE_CLIENT);
    const results = await client(cfg);
    process.send({ type: 'result', results }, () => process.exit(0));
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const mode = args.mode ?? 'latency';
  if (mode !== 'latency' && mode !== 'throughput') throw new Error(`--mode must be latency or throughput, not ${mode}`);
  const serverKind = args.server ?? 'rust';
  const cfg = {
    mode,
    serverKind,
    apis: (args.api ?? 'dispatch,request').split(','),
    blocks: Number(args.blocks ?? 30),
    block: Number(args.block ?? (mode === 'latency' ? 2000 : 20000)),
    concurrency: Number(args.concurrency ?? 100),
    warmupMs: Number(args.warmup ?? 2) * 1000,
    serverCpus: args['server-cpus'] ?? null,
    clientCpus: args['client-cpus'] ?? null,
  };
  const load0 = loadavg();
  const server =
    serverKind === 'rust' ? await startRustServer({ cpus: cfg.serverCpus, threads: 1 }) : await startNodeServer({ cpus: cfg.serverCpus, workers: 1 });
  cfg.base = {
    origin: `http://127.0.0.1:${server.port}`,
    path: '/small',
    expectBytes: 12,
    connections: mode === 'latency' ? 1 : 50,
    pipelining: mode === 'latency' ? 1 : 10,
    ...(args.blocking === 'false' ? { blocking: false } : null),
    undiciPkg: nodeAtLeast(22, 19) ? 'undici' : 'undici7',
    ferroUrl: pathToFileURL(path.resolve(process.env.BENCH_FERRO ?? path.join(ROOT, 'dist', 'index.js'))).href,
  };
  log(`alternate: ${cfg.apis.join(', ')}, ${cfg.blocks} block pairs of ${cfg.block} (${mode}) against the ${serverKind} server on port ${server.port}`);
  const child = forkNode(fileURLToPath(import.meta.url), [], {
    cpus: cfg.clientCpus,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_ALTERNATE_CLIENT: JSON.stringify(cfg) },
  });
  const results = await new Promise((resolve, reject) => {
    child.on('message', (m) => m?.type === 'result' && resolve(m.results));
    child.on('exit', (code) => reject(new Error(`client exited with ${code} before its result`)));
  });
  server.stop();
  process.stdout.write(report(cfg, results, load0, loadavg()) + '\n');
  process.exit(0);
}

main().catch((err) => {
  log(err?.stack ?? String(err));
  process.exit(1);
});
