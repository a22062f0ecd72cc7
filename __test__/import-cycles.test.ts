// The TypeScript tree has no import cycle (issue 10): checked with scripts/ts-import-cycles.mjs,
// which is itself checked on a small tree that has one.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const script = join(__dirname, '..', 'scripts', 'ts-import-cycles.mjs');

function run(dir: string, ...flags: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [script, dir, ...flags], { encoding: 'utf8' }) };
  } catch (err) {
    const e = err as { status: number; stdout: string };
    return { code: e.status, out: e.stdout };
  }
}

describe('import cycles', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'ferro-cycles-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('ts/ has none, among runtime imports and type imports alike', () => {
    const runtime = run(join(__dirname, '..', 'ts'));
    expect(runtime.out).toMatch(/^no import cycle among \d+ files \(runtime imports\)/);
    expect(runtime.code).toBe(0);
    const types = run(join(__dirname, '..', 'ts'), '--types');
    expect(types.out).toMatch(/^no import cycle among \d+ files \(imports \(types included\)\)/);
    expect(types.code).toBe(0);
  });

  it('the checker finds a cycle, and leaves type-only imports out unless asked', () => {
    writeFileSync(join(fixture, 'a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
    writeFileSync(join(fixture, 'b.ts'), "import { c } from './c.js';\nexport const b = c;\n");
    writeFileSync(join(fixture, 'c.ts'), "export { a as c } from './a.js';\n");
    writeFileSync(join(fixture, 'd.ts'), "import type { e } from './e.js';\nexport type d = e;\n");
    writeFileSync(join(fixture, 'e.ts'), "import { type d } from './d.js';\nexport type e = d | 1;\n");
    const runtime = run(fixture);
    expect(runtime.code).toBe(1);
    expect(runtime.out).toContain('a.ts ⇄ b.ts ⇄ c.ts');
    expect(runtime.out).not.toContain('d.ts');
    const withTypes = run(fixture, '--types');
    expect(withTypes.code).toBe(1);
    expect(withTypes.out).toContain('d.ts ⇄ e.ts');
  });
});
