// Type compatibility with undici.
// 1. One source file, written against undici's documented API, must type-check against undici's
//    own typings and, unchanged, against ferro's.
// 2. The shape checks (types/errors.ts, …) compile against ferro's *emitted* declarations the way a
//    user's project would: strict, skipLibCheck off, with lib esnext alone and with dom added.
//    Each `@ts-expect-error` in them fails the compile when its error does not occur.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const here = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
const project = (name: string): string => here(`./types/tsconfig.${name}.json`);
const shapeFiles = ['errors.ts', 'fetch.ts', 'dispatcher.ts', 'companions.ts', 'subpaths.ts', 'eventsource.ts', 'snapshot.ts', 'client.ts', 'diagnostics.ts', 'websocket.ts'].map((f) => here(`./types/${f}`));

function run(args: string[]): string {
  const r = spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8' });
  return `${r.status}\n${r.stdout}${r.stderr}`;
}

const typecheck = (name: string): string => run(['-p', project(name)]);

let declDir = '';

/** A consumer project: ferro's declarations as `ferro`, the shape files, the given libs. */
function consumer(lib: string[]): string {
  const config = join(declDir, `tsconfig.${lib.join('-')}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib,
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [here('../node_modules/@types')],
        // As the package's "exports" map resolves them: the entry and the types/ subpaths.
        paths: {
          ferro: [join(declDir, 'dist/main.d.ts')],
          'ferro/types': [join(declDir, 'types/index.d.ts')],
          'ferro/types/*': [join(declDir, 'types/*.d.ts')],
        },
      },
      files: shapeFiles,
    }),
  );
  return run(['-p', config]);
}

describe('types', () => {
  beforeAll(() => {
    declDir = mkdtempSync(join(tmpdir(), 'ferro-dts-'));
    const out = run(['-p', here('../tsconfig.json'), '--emitDeclarationOnly', '--declarationMap', 'false', '--sourceMap', 'false', '--outDir', join(declDir, 'dist')]);
    expect(out).toBe('0\n');
    cpSync(here('../types'), join(declDir, 'types'), { recursive: true });
    // ESM declarations, as in the package itself.
    writeFileSync(join(declDir, 'package.json'), '{"type":"module"}');
  }, 120_000);

  afterAll(() => {
    if (declDir) rmSync(declDir, { recursive: true, force: true });
  });

  it('the usage file is genuine undici code', () => {
    expect(typecheck('undici')).toBe('0\n');
  }, 60_000);

  it('the same file type-checks against ferro', () => {
    expect(typecheck('ferro')).toBe('0\n');
  }, 60_000);

  it('the shape checks hold against the emitted declarations, lib esnext (no DOM)', () => {
    expect(consumer(['esnext'])).toBe('0\n');
  }, 60_000);

  it('the shape checks hold against the emitted declarations, lib esnext + dom', () => {
    expect(consumer(['esnext', 'dom', 'dom.iterable'])).toBe('0\n');
  }, 60_000);
});
