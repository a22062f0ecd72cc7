// The gates `npm test` (and so CI) runs before any test: Rust formatting, clippy with warnings as
// errors, and knip for unused files / exports / types in ts/ (knip.jsonc). Each runs even when an
// earlier one failed, and a failure names the command that shows (or fixes) it.
//
//   node scripts/lint.mjs          (also: npm run lint)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const knip = fileURLToPath(new URL('../node_modules/knip/bin/knip.js', import.meta.url));

const gates = [
  { name: 'rustfmt', cmd: 'cargo', args: ['fmt', '--all', '--check'], fix: 'cargo fmt --all' },
  {
    name: 'clippy',
    cmd: 'cargo',
    args: ['clippy', '--workspace', '--all-targets', '--quiet', '--', '-D', 'warnings'],
    fix: 'cargo clippy --workspace --all-targets -- -D warnings',
  },
  {
    name: 'knip',
    cmd: process.execPath,
    args: [knip, '--no-progress', '--no-config-hints'],
    // An export only its own file uses loses its `export`; what nothing uses is deleted.
    fix: 'npx knip',
  },
];

const failed = [];
for (const gate of gates) {
  process.stderr.write(`== lint: ${gate.name}\n`);
  const started = Date.now();
  const r = spawnSync(gate.cmd, gate.args, { cwd: root, stdio: 'inherit' });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status === 0) {
    process.stderr.write(`   ${gate.name} ok (${secs} s)\n`);
  } else {
    failed.push(gate);
    process.stderr.write(`   ${gate.name} FAILED (${secs} s): run \`${gate.fix}\`\n`);
  }
}
if (failed.length > 0) {
  process.stderr.write(`lint failed: ${failed.map((g) => g.name).join(', ')}\n`);
  process.exit(1);
}
