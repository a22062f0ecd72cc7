// Type compatibility with undici: one source file, written against undici's documented API,
// must type-check against undici's own typings and, unchanged, against ferro's.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = (name: string): string => fileURLToPath(new URL(`./types/tsconfig.${name}.json`, import.meta.url));

function typecheck(name: string): string {
  const r = spawnSync(process.execPath, [tsc, '-p', project(name)], { encoding: 'utf8' });
  return `${r.status}\n${r.stdout}${r.stderr}`;
}

describe('types', () => {
  it('the usage file is genuine undici code', () => {
    expect(typecheck('undici')).toBe('0\n');
  }, 60_000);

  it('the same file type-checks against ferro', () => {
    expect(typecheck('ferro')).toBe('0\n');
  }, 60_000);
});
