// Runs the vitest suite once per engine driver (FERRO_ENGINE=threaded, then inline), so every test
// covers both; extra arguments go to vitest. Inline exists on Linux only: elsewhere it would be
// the threaded run again, so it is skipped.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const drivers = process.platform === 'linux' ? ['threaded', 'inline'] : ['threaded'];
for (const driver of drivers) {
  process.stderr.write(`\n== vitest with FERRO_ENGINE=${driver}\n`);
  const r = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, FERRO_ENGINE: driver },
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
