// pack:all's own checks: the binary reader and check (scripts/binary-check), and the refusal of a
// packed manifest that would run a script on a consumer's install (scripts/pack/manifest.mjs).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { platformTriple } from '../ts/native/platform.js';

const scripts = join(import.meta.dirname, '..', 'scripts');
// The scripts are plain ES modules without declarations: imported by URL and typed here.
const { checkBinary } = (await import(pathToFileURL(join(scripts, 'binary-check', 'check.mjs')).href)) as { checkBinary: (triple: string, file: string) => string };
const { readElf } = (await import(pathToFileURL(join(scripts, 'binary-check', 'elf.mjs')).href)) as {
  readElf: (buf: Buffer) => { format: string; arch: string; exports: string[]; imports: { name: string; version?: string }[] } | null;
};
const manifestChecks = (await import(pathToFileURL(join(scripts, 'pack', 'manifest.mjs')).href)) as {
  checkPackedManifest: (tarball: string) => { name: string };
  publishedManifest: (m: Record<string, unknown>, pkgs: string[]) => Record<string, unknown>;
};

const addon = join(import.meta.dirname, '..', 'native', `ferro.${platformTriple()}.node`);
const hostCpu = process.arch === 'x64' ? 'x86_64' : 'aarch64';
const linux = process.platform === 'linux';

/** An npm-style tarball whose package/package.json is `manifest`. */
function tarball(manifest: object, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferro-pack-check-'));
  mkdirSync(join(dir, 'package'));
  writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify(manifest));
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, 'package', name), text);
  execFileSync('tar', ['czf', join(dir, 'p.tgz'), '-C', dir, 'package']);
  return join(dir, 'p.tgz');
}

describe('binary check', () => {
  it.runIf(linux)('reads the built addon: an ELF shared object for this CPU exporting the N-API entry point', async () => {
    const { readFileSync } = await import('node:fs');
    const bin = readElf(readFileSync(addon));
    expect(bin?.format).toBe('ELF shared object');
    expect(bin?.arch).toBe(hostCpu);
    expect(bin?.exports).toContain('napi_register_module_v1');
    expect(bin?.imports.some((s) => s.name.startsWith('napi_'))).toBe(true);
    // glibc symbols carry their version.
    expect(bin?.imports.find((s) => s.name === 'malloc')?.version).toMatch(/^GLIBC_2\./);
  });

  it.runIf(linux)('refuses a binary for another CPU or another OS', () => {
    const other = hostCpu === 'x86_64' ? 'aarch64' : 'x86_64';
    expect(() => checkBinary(`${other}-unknown-linux-gnu`, addon)).toThrow(new RegExp(`built for ${hostCpu}, not ${other}`));
    expect(() => checkBinary('aarch64-apple-darwin', addon)).toThrow(/not the Mach-O file a aarch64-apple-darwin binary is/);
    expect(() => checkBinary('x86_64-pc-windows-gnu', addon)).toThrow(/not the PE file/);
  });

  it('refuses a file that is no library at all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferro-pack-check-'));
    writeFileSync(join(dir, 'x.node'), 'not a binary');
    expect(() => checkBinary('x86_64-unknown-linux-gnu', join(dir, 'x.node'))).toThrow(/not the ELF file/);
  });
});

describe('packed manifest check', () => {
  it('accepts a manifest with no lifecycle script', () => {
    expect(manifestChecks.checkPackedManifest(tarball({ name: 'ferro', version: '0.1.0', scripts: { test: 'vitest' } })).name).toBe('ferro');
  });

  for (const script of ['install', 'postinstall', 'preinstall', 'prepare']) {
    it(`refuses a manifest with a ${script} script`, () => {
      expect(() => manifestChecks.checkPackedManifest(tarball({ name: 'ferro', version: '0.1.0', scripts: { [script]: 'node x.mjs' } }))).toThrow(
        new RegExp(`would run a lifecycle script on install: ${script}`),
      );
    });
  }

  it('refuses a package shipping binding.gyp (npm runs node-gyp for it)', () => {
    expect(() => manifestChecks.checkPackedManifest(tarball({ name: 'ferro', version: '0.1.0' }, { 'binding.gyp': '{}' }))).toThrow(/binding\.gyp/);
  });

  it('publishes the checkout manifest without scripts or devDependencies, with the platform packages optional', () => {
    const checkout = { name: 'ferro', version: '1.2.3', scripts: { prepare: 'node scripts/build-from-source.mjs' }, devDependencies: { vitest: '4' } };
    const published = manifestChecks.publishedManifest(checkout, ['@ferro-http/binding-linux-x64-gnu']);
    expect(published.scripts).toBeUndefined();
    expect(published.devDependencies).toBeUndefined();
    expect(published.optionalDependencies).toEqual({ '@ferro-http/binding-linux-x64-gnu': '1.2.3' });
  });
});
