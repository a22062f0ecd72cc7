// Every example in docs/examples runs as it is (against the compiled package), so the
// documentation cannot drift from the code.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../docs/examples/', import.meta.url));
const examples = readdirSync(dir).filter((f) => f.endsWith('.mjs') && !f.startsWith('_'));

describe('docs/examples', () => {
  it('has examples', () => {
    expect(examples.length).toBeGreaterThan(5);
  });
  for (const file of examples) {
    it(`${file} runs`, () => {
      const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 15_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
    });
  }
});
