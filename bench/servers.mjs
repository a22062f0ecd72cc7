// The servers a bench run talks to:
// - node: bench/server.mjs (node:http, node:https, node:http2, WebSocket echo), the realistic case;
// - rust: crates/bench-server, a few µs of CPU per request, so that the client is the bottleneck
//   (plain HTTP/1.1 only: /small, /64k, /cacheable, /set-cookie);
// - h3: crates/h3-test-server --bench, HTTP/3 on UDP and HTTP/1.1 + HTTP/2 over TLS on the same
//   TCP port (crates/bench-server's code and routes), for the h3 rows;
// - redis-server, for the RedisCacheStore row.
// Each resolves to { port, httpsPort, h2Port, cpu(), stop() }, cpu() giving { user, system } in µs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkNode, log, spawnPinned } from './processes.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const CRATE_DIR = path.join(ROOT, 'crates', 'bench-server');
const H3_CRATE_DIR = path.join(ROOT, 'crates', 'h3-test-server');
const TLS_DIR = path.join(ROOT, '__test__', 'fixtures', 'tls');

export function startNodeServer({ cpus, workers }) {
  return new Promise((resolve, reject) => {
    const child = forkNode(path.join(BENCH_DIR, 'server.mjs'), [], {
      cpus,
      execArgv: ['--max-semi-space-size=16'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_SERVER_WORKERS: String(workers) },
    });
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
          stop: () => child.kill('SIGKILL'),
        });
      } else if (msg?.type === 'cpu') {
        pending.get(msg.id)?.(msg.usage);
        pending.delete(msg.id);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited early (code ${code}, signal ${signal})`));
    });
  });
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * A workspace binary built with profile bench-server (release without fat LTO) when missing or older
 * than the sources in `dirs`: crates/bench-server's by default.
 */
export function rustServerBinary(pkg = 'ferro-bench-server', dirs = [CRATE_DIR]) {
  const targetDir = path.resolve(ROOT, process.env.CARGO_TARGET_DIR ?? 'target');
  const bin = path.join(targetDir, 'bench-server', process.platform === 'win32' ? `${pkg}.exe` : pkg);
  const built = fs.existsSync(bin) ? fs.statSync(bin).mtimeMs : 0;
  if (built > Math.max(...dirs.map(newestMtime))) return bin;
  log(`building ${pkg} (cargo build --profile bench-server)…`);
  const r = spawnSync('cargo', ['build', '--quiet', '--profile', 'bench-server', '-p', pkg], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status === 0 && fs.existsSync(bin)) return bin;
  const why = r.error ? r.error.message : `cargo exited with ${r.status}`;
  if (built) {
    log(`cannot rebuild the bench server (${why}); using the older binary`);
    return bin;
  }
  throw new Error(`cannot build ${pkg}: ${why}`);
}

/**
 * A process's CPU time over all its threads, in µs, as { user, system } (both together in `user`:
 * schedstat does not split them), from /proc/<pid>/task/<tid>/schedstat (nanoseconds; /proc's
 * utime/stime would tick at 10 ms, too coarse for a latency window).
 */
function procCpu(pid) {
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return { user: ns / 1000, system: 0 };
  } catch {
    return null;
  }
}

export function startRustServer({ cpus, threads }) {
  const bin = rustServerBinary();
  return new Promise((resolve, reject) => {
    const child = spawnPinned(bin, ['--threads', String(threads)], { cpus, stdio: ['ignore', 'pipe', 'inherit'] });
    const timer = setTimeout(() => reject(new Error('bench server did not start within 10 s')), 10_000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        clearTimeout(timer);
        const { port } = JSON.parse(line);
        resolve({ port, httpsPort: null, h2Port: null, cpu: async () => procCpu(child.pid), stop: () => child.kill('SIGKILL') });
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`bench server exited early (code ${code}, signal ${signal})`));
    });
  });
}

// crates/h3-test-server --bench with the suite's localhost certificate: it prints `port N` once both
// sides listen, and exits when its stdin ends (so it goes with this process).
export function startH3Server({ cpus }) {
  const bin = rustServerBinary('h3-test-server', [H3_CRATE_DIR, CRATE_DIR]);
  const args = ['--bench', '--cert', path.join(TLS_DIR, 'localhost.pem'), '--key', path.join(TLS_DIR, 'localhost.key')];
  return new Promise((resolve, reject) => {
    const child = spawnPinned(bin, args, { cpus, stdio: ['pipe', 'pipe', 'inherit'] });
    const timer = setTimeout(() => reject(new Error('h3 test server did not start within 10 s')), 10_000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const port = Number(/^port (\d+)\n/.exec(out)?.[1]);
      if (!port) return;
      clearTimeout(timer);
      resolve({ port, httpsPort: port, h2Port: port, cpu: async () => procCpu(child.pid), stop: () => child.kill('SIGKILL') });
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`h3 test server exited early (code ${code}, signal ${signal})`));
    });
  });
}

// A redis-server for the RedisCacheStore row, killed with the other children; { error } without one.
export async function startRedis() {
  if (spawnSync('redis-server', ['--version']).status !== 0) return { error: 'redis-server is not installed' };
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawnPinned('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of child.stdout) if ((out += chunk).includes('Ready to accept connections')) break;
  child.stdout.resume();
  if (child.exitCode !== null) return { error: `redis-server exited: ${out.slice(-500)}` };
  log(`redis-server on port ${port}`);
  return { url: `redis://127.0.0.1:${port}` };
}
