// What one exchange (one small request at a time, on one kept-alive connection) asks of the kernel:
// runs a contender under `strace -f`, marks the boundary between exchanges with a failing
// access("/ferro-bench-mark-N") call, and prints the syscalls between two marks, thread by thread,
// plus the average count per exchange by syscall.
//
//   node bench/trace-exchange.mjs [--contender=ferro-request] [--driver=inline|threaded]
//                                 [--server=rust|node] [--exchanges=200] [--show=1]
//
// strace slows every syscall down, so this gives the sequence and the counts, not the timing
// (`node bench/run.mjs --scenarios=latency --perf` counts without strace). BENCH_FERRO as run.mjs.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeContender } from './contenders.mjs';
import { killAll, log } from './processes.mjs';
import { startNodeServer, startRustServer } from './servers.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const MARK = '/ferro-bench-mark-';
const WARMUP = 300;

async function child(cfg) {
  const c = await makeContender(cfg);
  const one = () => new Promise((resolve, reject) => c.issue((err, status) => (err ? reject(err) : resolve(status))));
  for (let i = 0; i < WARMUP; i++) await one();
  for (let i = 0; i <= cfg.exchanges; i++) {
    // A syscall of the JS thread that strace shows, failing with ENOENT: the boundary.
    try {
      fs.accessSync(`${MARK}${i}`);
    } catch {}
    if (i < cfg.exchanges) await one();
  }
  await c.close();
  process.exit(0);
}

/** strace -f output lines: [tid, text], with "<unfinished ...>" and "resumed>" halves joined. */
function parseStrace(text) {
  const lines = [];
  const open = new Map();
  for (const raw of text.split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(raw);
    if (!m) continue;
    const [, tid, rest] = m;
    if (rest.endsWith('<unfinished ...>')) {
      open.set(tid, lines.length);
      lines.push([tid, rest.replace(' <unfinished ...>', ' …')]);
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed && open.has(tid)) {
      const i = open.get(tid);
      lines[i] = [tid, lines[i][1].replace(' …', resumed[2])];
      open.delete(tid);
      continue;
    }
    lines.push([tid, rest]);
  }
  return lines;
}

async function parent(args) {
  const contender = args.contender ?? 'ferro-request';
  const exchanges = Number(args.exchanges ?? 200);
  const show = Number(args.show ?? 1);
  if (spawnSync('strace', ['-V']).status !== 0) throw new Error('strace is not installed (Debian: apt-get install strace)');
  const server = args.server === 'node' ? await startNodeServer({ cpus: null, workers: 1 }) : await startRustServer({ cpus: null, threads: 1 });
  const cfg = {
    contender,
    origin: `http://127.0.0.1:${server.port}`,
    path: '/small',
    expectBytes: 12,
    connections: 1,
    pipelining: 1,
    exchanges,
    undiciPkg: Number(process.versions.node.split('.')[0]) >= 22 ? 'undici' : 'undici7',
    ferroUrl: pathToFileURL(path.resolve(process.env.BENCH_FERRO ?? path.join(ROOT, 'dist', 'index.js'))).href,
  };
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ferro-trace-')), 'strace.txt');
  const env = { ...process.env, ...(args.driver ? { FERRO_ENGINE: args.driver } : null) };
  const code = await new Promise((resolve) => {
    const p = spawn('strace', ['-f', '-qq', '-s', '24', '-o', out, process.execPath, fileURLToPath(import.meta.url), '--child', JSON.stringify(cfg)], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env,
    });
    p.on('exit', resolve);
  });
  server.stop();
  if (code !== 0) throw new Error(`traced client exited with ${code}`);
  const lines = parseStrace(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  const marks = [];
  lines.forEach(([, text], i) => {
    const m = /ferro-bench-mark-(\d+)/.exec(text);
    if (m) marks[Number(m[1])] = i;
  });
  if (marks.length !== exchanges + 1 || marks.includes(undefined)) throw new Error(`found ${marks.filter((x) => x !== undefined).length} of ${exchanges + 1} marks`);
  const mainTid = lines[marks[0]][0];
  const bySyscall = new Map();
  const byThread = { main: 0, others: 0 };
  for (let i = 0; i < exchanges; i++) {
    for (const [tid, text] of lines.slice(marks[i] + 1, marks[i + 1])) {
      const name = /^(\w+)\(/.exec(text)?.[1] ?? text.split(' ')[0];
      const key = `${tid === mainTid ? 'main' : 'other'} ${name}`;
      bySyscall.set(key, (bySyscall.get(key) ?? 0) + 1);
      byThread[tid === mainTid ? 'main' : 'others']++;
    }
  }
  const label = `${contender}${args.driver ? ` (${args.driver})` : ''}, ${args.server === 'node' ? 'node:http' : 'Rust'} server`;
  console.log(`## ${label}: ${exchanges} exchanges`);
  console.log(`\nsyscalls per exchange: ${((byThread.main + byThread.others) / exchanges).toFixed(2)} (JS thread ${(byThread.main / exchanges).toFixed(2)}, other threads ${(byThread.others / exchanges).toFixed(2)})\n`);
  for (const [key, n] of [...bySyscall].sort((a, b) => b[1] - a[1])) console.log(`- ${key}: ${(n / exchanges).toFixed(2)}`);
  for (let k = 0; k < show; k++) {
    const i = Math.floor(exchanges / 2) + k;
    console.log(`\nexchange ${i}:\n`);
    for (const [tid, text] of lines.slice(marks[i] + 1, marks[i + 1])) console.log(`    ${tid === mainTid ? 'js ' : 'eng'} ${text}`);
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  await child(JSON.parse(argv[1]));
} else {
  const args = Object.fromEntries(argv.map((a) => /^--([^=]+)(?:=(.*))?$/.exec(a)).filter(Boolean).map((m) => [m[1], m[2] ?? true]));
  try {
    await parent(args);
  } catch (err) {
    log(`trace-exchange: ${err.message}`);
    process.exitCode = 1;
  }
  killAll();
}
