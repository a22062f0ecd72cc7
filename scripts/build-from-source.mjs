// The checkout's `prepare` script: `npm install` / `npm ci` in a clone (npm 10 and 11 run the root
// package's `prepare` for both, and for a git dependency before packing it) builds the native addon
// with cargo through the napi-rs CLI and compiles the TypeScript. `prepare` is never run for a
// package installed from a registry tarball, and `pack:all` publishes a manifest with no lifecycle
// script at all, so consumers run nothing on install: optionalDependencies bring the binary.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'Cargo.toml')) || !existsSync(join(root, 'ts'))) process.exit(0);
if (process.env.FERRO_SKIP_BUILD === '1') {
  console.log('ferro: FERRO_SKIP_BUILD=1, not building');
  process.exit(0);
}

function run(cmd, args) {
  console.log(`ferro: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.error) {
    console.error(`ferro: cannot run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.status !== 0) {
  console.error('ferro: building from source needs a Rust toolchain (cargo) — https://rustup.rs');
  process.exit(1);
}
run('npm', ['run', 'build:native']);
run('npm', ['run', 'build:ts']);
