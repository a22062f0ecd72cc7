// Both module forms of the package, as a user's project sees it: a CommonJS TypeScript project
// (`module: node16`, CommonJS output, `require('ferro')` at run time through Node's require(esm))
// and an ESM one (`module: nodenext`, `type: module`) compile strict with skipLibCheck off against
// the package's "exports" map and run. Uses the built dist/ (`npm run build:ts`, run by pretest).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const root = fileURLToPath(new URL('..', import.meta.url));

const source = `import { Agent, request, type Dispatcher } from 'ferro';
import ferro from 'ferro';
import type Client from 'ferro/types/client';
const agent: Dispatcher = new Agent();
const opts: Dispatcher.DispatchOptions = { path: '/', method: 'GET' };
const clientOpts: Client.Options = { pipelining: 1 };
// @ts-expect-error the subpath's types are ferro's, not \`any\`
export const bad: Client.Options = { pipelining: 'yes' };
console.log(typeof request, agent instanceof Agent, typeof ferro.fetch, opts.method, clientOpts.pipelining);
void agent.close();
`;

let dir = '';

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return `${r.status}\n${r.stdout}${r.stderr}`;
}

/** A consumer project in its own directory, with ferro linked into its node_modules. */
function project(name: string, type: 'commonjs' | 'module', module: string): string {
  const p = join(dir, name);
  mkdirSync(join(p, 'node_modules'), { recursive: true });
  symlinkSync(root, join(p, 'node_modules', 'ferro'), 'dir');
  symlinkSync(join(root, 'node_modules', '@types'), join(p, 'node_modules', '@types'), 'dir');
  writeFileSync(join(p, 'package.json'), JSON.stringify({ name, type }));
  writeFileSync(
    join(p, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module, moduleResolution: module, target: 'ES2022', strict: true, esModuleInterop: true, skipLibCheck: false, types: ['node'], outDir: 'out' },
      files: ['index.ts'],
    }),
  );
  writeFileSync(join(p, 'index.ts'), source);
  return p;
}

describe('module forms', () => {
  beforeAll(() => {
    expect(existsSync(join(root, 'dist/main.js')), 'dist/ is built (npm run build:ts)').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'ferro-forms-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['cjs', 'commonjs', 'node16'],
    ['cjs-nodenext', 'commonjs', 'nodenext'],
    ['esm', 'module', 'nodenext'],
  ] as const)('%s consumer (%s, module %s) compiles and runs', (name, type, module) => {
    const p = project(name, type, module);
    expect(run(process.execPath, [tsc, '-p', '.'], p)).toBe('0\n');
    expect(run(process.execPath, ['out/index.js'], p)).toBe('0\nfunction true function GET 1\n');
  }, 120_000);
});
