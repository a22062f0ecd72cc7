// Proves the prebuilt-binary path end to end, the way users meet it: builds the native engine for
// each target, packs each platform package (npm/<platform>/) and the main package with `npm pack`,
// installs the tarballs into an empty project with a PATH that has node but no cargo, and runs a
// request there against a local server.
//
//   node scripts/pack-all.mjs [--targets <rust triple>,...] [--dev] [--skip-build] [--keep]
//
// --targets  default: the host's triple. A foreign Linux triple is cross-compiled (it needs that
//            target's Rust standard library and a linker, see README "Install matrix") and its
//            smoke test runs under qemu-user with that architecture's Node binary, taken from the
//            npm registry's node-linux-<arch> package.
// --dev      debug-profile binaries (faster to build; the release workflow always uses --release).
// --skip-build  reuse binaries left in .pack/ by an earlier run.
// --keep     leave the temporary project in place and print its path.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stage = join(root, '.pack');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const scope = manifest.napi.packageName; // @ferro-http/binding
const hostTriple = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] + '-unknown-linux-gnu';
const targets = (option('--targets') ?? hostTriple).split(',').filter(Boolean);

const ARCH = { x86_64: 'x64', aarch64: 'arm64' };
/** x86_64-unknown-linux-gnu → linux-x64-gnu (the npm/ folder and package suffix). */
function suffix(triple) {
  const [cpu, , os, abi] = triple.split('-');
  if (os === 'linux') return `linux-${ARCH[cpu] ?? cpu}-${abi}`;
  if (os === 'darwin') return `darwin-${ARCH[cpu] ?? cpu}`;
  return `win32-${ARCH[cpu] ?? cpu}-${abi}`;
}

function run(cmd, argv, opts = {}) {
  console.log(`pack-all: ${cmd} ${argv.join(' ')}`);
  const r = spawnSync(cmd, argv, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} ${r.signal ? `was killed (${r.signal})` : `exited with ${r.status}`}`);
}

/** The npm CLI, run by this node: the smoke project's PATH holds no npm shim. */
const npmCli = [
  process.env.npm_execpath,
  join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
].find((p) => p && p.endsWith('.js') && existsSync(p));
if (!npmCli) throw new Error('pack-all: cannot find npm-cli.js');
const npm = (argv, opts) => run(process.execPath, [npmCli, ...argv], opts);

/**
 * Build settings for a foreign Linux target. The Rust standard library for it comes from rustup
 * when installed there, else from Debian's rustc-web packages (/usr/bin/rustc; arm64 through
 * `libstd-rust-web-dev:arm64`, musl built from `rust-web-src` with -Zbuild-std, which links the
 * unwinder from `FERRO_MUSL_GCC_LIB`, a folder holding a libgcc_s.so.1). Linkers: Debian's
 * gcc-<cpu>-linux-gnu and musl-tools. A different compiler needs its own target folder.
 */
function crossBuild(triple) {
  if (triple === hostTriple) return { env: {}, extra: [] };
  const envName = triple.toUpperCase().replaceAll('-', '_');
  const cpu = triple.split('-')[0];
  const musl = triple.endsWith('musl');
  const sysroot = spawnSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).stdout.trim();
  const rustup = existsSync(join(sysroot, 'lib', 'rustlib', triple));
  const env = {
    [`CARGO_TARGET_${envName}_LINKER`]: musl ? 'musl-gcc' : `${cpu}-linux-gnu-gcc`,
    [`CC_${triple.replaceAll('-', '_')}`]: musl ? 'musl-gcc' : `${cpu}-linux-gnu-gcc`,
    CARGO_TARGET_DIR: process.env.FERRO_CROSS_TARGET_DIR ?? join(stage, 'target-cross'),
  };
  if (rustup) return { env, extra: [] };
  Object.assign(env, { PATH: `/usr/bin${delimiter}${process.env.PATH}`, RUSTC: '/usr/bin/rustc' });
  if (!musl) return { env, extra: [] };
  const gccLib = process.env.FERRO_MUSL_GCC_LIB ?? '/tmp/musl-gcclib';
  env.RUSTC_BOOTSTRAP = '1';
  env.RUSTFLAGS = `-C target-feature=-crt-static -C link-self-contained=no -L ${gccLib}`;
  return { env, extra: ['--', '-Zbuild-std=std,panic_unwind'] };
}

// 1. Binaries.
mkdirSync(stage, { recursive: true });
const built = [];
for (const triple of targets) {
  const name = suffix(triple);
  const out = join(stage, 'bin', name);
  const file = join(out, `ferro.${name}.node`);
  if (!flag('--skip-build')) {
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const profile = flag('--dev') ? [] : ['--release'];
    const cross = crossBuild(triple);
    run('npx', ['napi', 'build', '--platform', ...profile, '--target', triple, '--output-dir', out, '--no-js', '--dts', join(out, 'napi.d.ts'), ...cross.extra], {
      env: { ...process.env, ...cross.env },
    });
  }
  if (!existsSync(file)) throw new Error(`pack-all: ${file} was not built`);
  built.push({ triple, name, file });
}

// 2. The TypeScript.
npm(['run', 'build:ts']);

// 3. Platform packages.
const tarballs = join(stage, 'tarballs');
rmSync(tarballs, { recursive: true, force: true });
mkdirSync(tarballs, { recursive: true });
for (const b of built) {
  const dir = join(stage, 'pkg', b.name);
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(root, 'npm', b.name), dir, { recursive: true });
  cpSync(b.file, join(dir, `ferro.${b.name}.node`));
  npm(['pack', '--pack-destination', tarballs], { cwd: dir });
}

// 4. The main package: what `files` lists, with the platform packages as optional dependencies
// (the release workflow lists every target; here, the ones built).
const main = join(stage, 'pkg', 'ferro');
rmSync(main, { recursive: true, force: true });
mkdirSync(main, { recursive: true });
for (const f of [...manifest.files, 'README.md']) cpSync(join(root, f), join(main, f), { recursive: true });
const published = { ...manifest, optionalDependencies: Object.fromEntries(built.map((b) => [`${scope}-${b.name}`, manifest.version])) };
delete published.devDependencies;
writeFileSync(join(main, 'package.json'), JSON.stringify(published, null, 2) + '\n');
npm(['pack', '--pack-destination', tarballs], { cwd: main });

// 5. Install into an empty project and make a request, per target.
const smokeSource = `
import { createServer } from 'node:http';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const server = createServer((req, res) => res.end('pong ' + req.url));
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = 'http://127.0.0.1:' + server.address().port;
const { request, fetch, Agent } = await import('ferro');
const dispatcher = new Agent();
const { statusCode, body } = await request(origin + '/ping', { dispatcher });
const text = await body.text();
const viaFetch = await (await fetch(origin + '/f', { dispatcher })).text();
// CommonJS consumers load the same ESM package through require(esm) where Node has it.
const pkgDir = require.resolve('ferro/package.json').replace(/package\\.json$/, '');
if (existsSync(pkgDir + 'native')) throw new Error('the installed package must not carry a native/ build');
await dispatcher.close();
server.close();
if (statusCode !== 200 || text !== 'pong /ping' || viaFetch !== 'pong /f') throw new Error('unexpected answer: ' + statusCode + ' ' + text + ' ' + viaFetch);
console.log('smoke: ' + process.arch + ' ' + process.version + ' got ' + statusCode + ' ' + JSON.stringify(text) + ' through the packed ferro');
`;

function nodeFor(triple) {
  if (triple === hostTriple) return { node: process.execPath, prefix: [] };
  // The registry has no musl build of Node: one must be given (say, from an Alpine machine).
  if (triple.endsWith('musl')) {
    const node = process.env.FERRO_SMOKE_NODE_MUSL;
    return node ? { node, prefix: [] } : null;
  }
  const arch = ARCH[triple.split('-')[0]];
  const cache = join(stage, 'node', arch);
  const bin = join(cache, 'package', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(cache, { recursive: true });
    // The npm registry carries Node's official binaries as node-linux-<arch> packages.
    const version = process.versions.node.split('.')[0];
    npm(['pack', `node-linux-${arch}@${version}`, '--pack-destination', cache]);
    const tgz = readdirSync(cache).find((f) => f.endsWith('.tgz'));
    run('tar', ['xzf', join(cache, tgz), '-C', cache]);
  }
  // qemu-user runs the foreign Node; -L points it at that architecture's libraries (the Debian
  // cross packages' sysroot). Found on this PATH: the smoke project's own PATH has no qemu.
  const qemu = spawnSync('sh', ['-c', `command -v qemu-${triple.split('-')[0]}`], { encoding: 'utf8' }).stdout.trim();
  if (!qemu) throw new Error(`pack-all: qemu-${triple.split('-')[0]} is needed to run the ${triple} smoke test (Debian: qemu-user)`);
  return { node: bin, prefix: [qemu, '-L', `/usr/${triple.replace('unknown-', '')}`] };
}

const failures = [];
const skipped = [];
for (const b of built) {
  const runner = nodeFor(b.triple);
  if (runner === null) {
    skipped.push(`${b.name}: packed, not run (no Node for it here; set FERRO_SMOKE_NODE_MUSL)`);
    continue;
  }
  const { node, prefix } = runner;
  const project = mkdtempSync(join(tmpdir(), `ferro-smoke-${b.name}-`));
  const bin = join(project, '.bin-no-cargo');
  mkdirSync(bin);
  // node, and the shell npm runs lifecycle scripts (ferro's install hook) with; nothing else.
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  const env = { HOME: process.env.HOME, PATH: bin, npm_config_cache: join(stage, 'npm-cache'), npm_config_update_notifier: 'false' };
  const cargo = spawnSync('cargo', ['--version'], { env });
  if (!cargo.error) throw new Error('pack-all: cargo is still reachable on the smoke PATH');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ferro-smoke', private: true, type: 'module' }, null, 2));
  const files = readdirSync(tarballs).filter((f) => f === `ferro-${manifest.version}.tgz` || f.includes(b.name));
  // --force: the platform package of a foreign target is installed on this host on purpose.
  const force = b.triple === hostTriple ? [] : ['--force'];
  npm(['install', '--offline', '--no-audit', '--no-fund', ...force, ...files.map((f) => join(tarballs, f))], { cwd: project, env });
  writeFileSync(join(project, 'smoke.mjs'), smokeSource);
  // Emulated Node is slow, but a hang must end: FERRO_SMOKE_TIMEOUT seconds (default 600).
  const timeout = Number(process.env.FERRO_SMOKE_TIMEOUT ?? 600) * 1000;
  try {
    if (prefix.length) run(prefix[0], [...prefix.slice(1), node, 'smoke.mjs'], { cwd: project, env, timeout });
    else run(node, ['smoke.mjs'], { cwd: project, env, timeout });
  } catch (err) {
    failures.push(`${b.name}: ${err.message}`);
  }
  if (flag('--keep')) console.log(`pack-all: kept ${project}`);
  else rmSync(project, { recursive: true, force: true });
}
if (failures.length) {
  console.error(`pack-all: FAILED\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
for (const s of skipped) console.log(`pack-all: SKIPPED ${s}`);
console.log(`pack-all: ok (${built.map((b) => b.name).join(', ')}); tarballs in ${tarballs}`);
