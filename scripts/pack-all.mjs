// Builds, checks, packs and smoke-tests the prebuilt binaries, the way users meet them; the release
// workflow runs exactly this. For each target: a release build (scripts/pack/targets.mjs), the
// binary check (scripts/binary-check/check.mjs), its npm/<platform> package packed with `npm pack`;
// then the main package (no lifecycle scripts, the platform packages as optionalDependencies); then
// per target, an install of the tarballs into an empty project with no cargo on PATH and a request,
// a fetch and a TLS request there (scripts/pack/smoke.mjs).
//
//   node scripts/pack-all.mjs [--targets <rust triple>,...] [--dev] [--skip-build] [--smoke-only]
//                             [--require-smoke] [--keep]
//
// --targets        default: the host's triple.
// --dev            debug-profile binaries (quicker; releases use the release profile).
// --skip-build     reuse the binaries in .pack/bin from an earlier run (still checked and packed).
// --smoke-only     only the smoke test, of tarballs already in .pack/tarballs (a native runner of the
//                  release workflow, given the tarballs the build job packed).
// --require-smoke  a target whose smoke test cannot run here fails instead of being reported.
// --keep           leave each smoke project in place and print its path.
// FERRO_CROSS_TARGET_DIR  cargo's target folder (default .pack/target).
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkBinary } from './binary-check/check.mjs';
import { checkPackedManifest, publishedManifest } from './pack/manifest.mjs';
import { hostTriple, runnerFor, smokeTest } from './pack/smoke.mjs';
import { buildCommand, suffix } from './pack/targets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stage = join(root, '.pack');
const tarballs = join(stage, 'tarballs');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const scope = manifest.napi.packageName; // @ferro-http/binding
// The Windows x64 package is built from the gnu triple (MSVC's libraries are in no registry this
// build reaches; README "Install matrix"): asking for the msvc triple, as the six-target list
// names it, builds that package and says so.
const WINDOWS_MSVC = 'x86_64-pc-windows-msvc';
const targets = [...new Set((option('--targets') ?? hostTriple()).split(',').filter(Boolean).map((t) => {
  if (t !== WINDOWS_MSVC) return t;
  console.log(`pack-all: ${WINDOWS_MSVC} is built as x86_64-pc-windows-gnu (win32-x64-gnu; N-API from node.exe at load time)`);
  return 'x86_64-pc-windows-gnu';
}))];
const smokeOnly = flag('--smoke-only');

function run(cmd, argv, opts = {}) {
  console.log(`pack-all: ${cmd} ${argv.join(' ')}`);
  const r = spawnSync(cmd, argv, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} ${r.signal ? `was killed (${r.signal})` : `exited with ${r.status}`}`);
}

/** The npm CLI, run by this node: the smoke project's PATH holds no npm shim. */
const npmCli = [process.env.npm_execpath, join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), join(dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js')].find(
  (p) => p && p.endsWith('.js') && existsSync(p),
);
if (!npmCli) throw new Error('pack-all: cannot find npm-cli.js');
const npm = (argv, opts) => run(process.execPath, [npmCli, ...argv], opts);
/** `npm pack` in `dir`; returns the tarball's path after checking its manifest. */
function pack(dir) {
  const before = new Set(readdirSync(tarballs));
  npm(['pack', '--pack-destination', tarballs], { cwd: dir });
  const made = readdirSync(tarballs).find((f) => !before.has(f));
  const file = join(tarballs, made);
  checkPackedManifest(file);
  return file;
}

const report = targets.map((triple) => ({ triple, name: suffix(triple), file: join(stage, 'bin', suffix(triple), `ferro.${suffix(triple)}.node`) }));

if (!smokeOnly) {
  // 1. Binaries, each checked.
  const targetDir = process.env.FERRO_CROSS_TARGET_DIR ?? join(stage, 'target');
  for (const t of report) {
    if (!flag('--skip-build')) {
      const build = buildCommand(t.triple, { dev: flag('--dev'), targetDir, stage });
      const started = Date.now();
      run(build.cmd, build.argv, { env: { ...process.env, ...build.env } });
      t.buildSeconds = Math.round((Date.now() - started) / 1000);
      mkdirSync(dirname(t.file), { recursive: true });
      copyFileSync(build.artifact, t.file);
    }
    if (!existsSync(t.file)) throw new Error(`pack-all: ${t.file} was not built`);
    t.check = checkBinary(t.triple, t.file);
    console.log(`pack-all: ${t.name}: ${t.check}`);
  }

  // 2. The TypeScript, then every package, each tarball's manifest checked for install scripts.
  npm(['run', 'build:ts']);
  rmSync(tarballs, { recursive: true, force: true });
  mkdirSync(tarballs, { recursive: true });
  for (const t of report) {
    const dir = join(stage, 'pkg', t.name);
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(root, 'npm', t.name), dir, { recursive: true });
    copyFileSync(t.file, join(dir, `ferro.${t.name}.node`));
    t.tarball = pack(dir);
  }
  // The main package: what `files` lists; the release lists every target, a local run the ones built.
  const main = join(stage, 'pkg', 'ferro');
  rmSync(main, { recursive: true, force: true });
  mkdirSync(main, { recursive: true });
  for (const f of [...manifest.files, 'README.md']) cpSync(join(root, f), join(main, f), { recursive: true });
  const published = publishedManifest(manifest, report.map((t) => `${scope}-${t.name}`));
  writeFileSync(join(main, 'package.json'), JSON.stringify(published, null, 2) + '\n');
  pack(main);
}

// 3. Smoke tests.
const mainTarball = join(tarballs, `ferro-${manifest.version}.tgz`);
if (!existsSync(mainTarball)) throw new Error(`pack-all: ${mainTarball} is missing`);
const failures = [];
for (const t of report) {
  const runner = runnerFor(t.triple, { stage, npm });
  if (runner.skip) {
    t.smoke = `not run: ${runner.skip}`;
    if (flag('--require-smoke')) failures.push(`${t.name}: ${t.smoke}`);
    continue;
  }
  const own = readdirSync(tarballs).find((f) => f.startsWith(`ferro-http-binding-${t.name}-`));
  if (!own) throw new Error(`pack-all: no tarball for ${t.name} in ${tarballs}`);
  try {
    t.smoke = smokeTest({ name: t.name, tarballs: [mainTarball, join(tarballs, own)], foreign: t.triple !== hostTriple(), runner, stage, npm, keep: flag('--keep') });
  } catch (err) {
    t.smoke = `FAILED: ${err.message}`;
    failures.push(`${t.name}: ${err.message}`);
  }
}

writeFileSync(join(stage, 'report.json'), JSON.stringify(report, null, 2) + '\n');
console.log('\npack-all: target → check; smoke');
for (const t of report) console.log(`  ${t.name}: ${t.check ?? '(checked by the job that built it)'}\n    smoke: ${t.smoke.replace(/^smoke: /, '')}`);
if (failures.length) {
  console.error(`pack-all: FAILED\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`pack-all: ok (${report.map((t) => t.name).join(', ')}); tarballs in ${tarballs}`);
