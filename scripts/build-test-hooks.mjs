// `npm test`'s pretest: one dev-profile cargo build of the whole workspace with the engine's test
// hooks on, which gives the suite its two helpers' binaries (crates/h3-test-server, the bench
// server) and a test-hooks addon, copied to target/test-hooks/ferro.node for the panic tests
// (__test__/fixtures/test-hooks-build.ts). Plain cargo, not the napi CLI: the CLI passes an explicit
// --target, which puts every dependency in a second directory (target/<triple>/debug) and compiles
// it all again; here `cargo test --workspace --features ferro/test-hooks` reuses the same build.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const r = spawnSync('cargo', ['build', '--workspace', '--features', 'ferro/test-hooks', '--quiet'], {
  cwd: root,
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
if (r.status !== 0) process.exit(r.status ?? 1);

const lib = { darwin: 'libferro.dylib', win32: 'ferro.dll' }[process.platform] ?? 'libferro.so';
const targetDir = resolve(root, process.env.CARGO_TARGET_DIR ?? 'target');
const out = join(root, 'target', 'test-hooks');
mkdirSync(out, { recursive: true });
// The fixture loads the one .node file it finds here.
for (const f of readdirSync(out)) if (f.endsWith('.node')) rmSync(join(out, f));
copyFileSync(join(targetDir, 'debug', lib), join(out, 'ferro.node'));
