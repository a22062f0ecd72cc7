// The native loader: a binary built in the checkout first, then the platform package, otherwise
// an error that names the platform, the package and how to build from source (never a bare
// MODULE_NOT_FOUND).
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { detectLibc, loadBinding, packageSuffix, platformTriple } from '../ts/native/binding.js';

const realRequire = createRequire(import.meta.url);
const built = [join(import.meta.dirname, '..', 'native', `ferro.${platformTriple()}.node`)];
const prebuilt = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-arm64'];

/** A require that finds only `packages` (each answering with its name), like an install without the others. */
function fakeRequire(packages: Record<string, unknown>): NodeJS.Require {
  const fn = ((id: string) => {
    if (id in packages) {
      const v = packages[id];
      if (v instanceof Error) throw v;
      return v;
    }
    if (id.startsWith('@')) throw Object.assign(new Error(`Cannot find module '${id}'\nRequire stack: x`), { code: 'MODULE_NOT_FOUND' });
    return realRequire(id);
  }) as NodeJS.Require;
  return fn;
}

describe('native loader', () => {
  it('names Rust targets as the packages do', () => {
    expect(
      ['x86_64-unknown-linux-gnu', 'aarch64-unknown-linux-gnu', 'x86_64-unknown-linux-musl', 'x86_64-apple-darwin', 'aarch64-apple-darwin', 'x86_64-pc-windows-msvc'].map(packageSuffix),
    ).toEqual(['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']);
    expect(packageSuffix('x86_64-pc-windows-gnu')).toBe('win32-x64-gnu');
  });

  it('tells glibc from musl by /usr/bin/ldd, else by the running Node\'s report', () => {
    const probe = (ldd: string | null, glibc?: string) => ({ ldd: () => ldd, glibcVersionRuntime: () => glibc });
    // Alpine: /usr/bin/ldd is a script that runs musl's loader.
    expect(detectLibc(probe('#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n'))).toBe('musl');
    expect(detectLibc(probe('#! /bin/bash\n# Copyright (C) 1996-2022 Free Software Foundation, Inc.\n# This file is part of the GNU C Library.\n'))).toBe('gnu');
    // No ldd (a slim image): the report decides.
    expect(detectLibc(probe(null, '2.36'))).toBe('gnu');
    expect(detectLibc(probe(null, undefined))).toBe('musl');
    expect(detectLibc(probe('something else', '2.28'))).toBe('gnu');
    // This machine, by both routes.
    const report = process.report.getReport() as { header: { glibcVersionRuntime?: string } };
    expect(detectLibc()).toBe(report.header.glibcVersionRuntime ? 'gnu' : 'musl');
  });

  it('names the platform package for each OS, CPU and libc', () => {
    expect(platformTriple('linux', 'x64', () => 'gnu')).toBe('linux-x64-gnu');
    expect(platformTriple('linux', 'x64', () => 'musl')).toBe('linux-x64-musl');
    expect(platformTriple('linux', 'arm64', () => 'gnu')).toBe('linux-arm64-gnu');
    expect(platformTriple('darwin', 'arm64')).toBe('darwin-arm64');
    expect(platformTriple('darwin', 'x64')).toBe('darwin-x64');
    expect(platformTriple('win32', 'x64')).toBe('win32-x64-gnu');
  });

  it('on musl takes the musl package, not the glibc one', () => {
    const packages = { '@ferro-http/binding-linux-x64-gnu': { NativeEngine: 'glibc' }, '@ferro-http/binding-linux-x64-musl': { NativeEngine: 'musl' } };
    const triple = platformTriple('linux', 'x64', () => 'musl');
    expect(loadBinding({ triple, localPaths: ['/nonexistent'], require: fakeRequire(packages), prebuilt }).NativeEngine).toBe('musl');
  });

  it('takes the binary built in the checkout before any package', () => {
    const b = loadBinding({ triple: platformTriple(), localPaths: built, require: fakeRequire({ [`@ferro-http/binding-${platformTriple()}`]: 'pkg' }), prebuilt });
    expect(typeof b.NativeEngine).toBe('function');
  });

  it('takes the platform package when nothing was built', () => {
    const b = loadBinding({ triple: 'linux-arm64-gnu', localPaths: ['/nonexistent/ferro.node'], require: fakeRequire({ '@ferro-http/binding-linux-arm64-gnu': { NativeEngine: 'from-package' } }), prebuilt });
    expect(b.NativeEngine).toBe('from-package');
  });

  it('fails on an unsupported platform with the platform, the package and how to build', () => {
    let err: NodeJS.ErrnoException | undefined;
    try {
      loadBinding({ triple: 'freebsd-riscv64', localPaths: ['/nonexistent/ferro.freebsd-riscv64.node'], require: fakeRequire({}), prebuilt });
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    expect(err?.code).toBe('ERR_FERRO_NATIVE_MISSING');
    expect(err?.message).toContain('freebsd-riscv64');
    expect(err?.message).toContain('@ferro-http/binding-freebsd-riscv64: not installed');
    expect(err?.message).toContain('Prebuilt packages exist for: linux-x64-gnu, linux-arm64-gnu, darwin-arm64');
    expect(err?.message).toContain('npm run build:native');
    expect(err?.message).toContain('https://rustup.rs');
    // One message: platform, package, and the source build, in that order.
    expect(err?.message).toMatch(/freebsd-riscv64[\s\S]*@ferro-http\/binding-freebsd-riscv64[\s\S]*npm install/);
  });

  it('says to reinstall with optional dependencies when a supported platform lacks its package', () => {
    expect(() => loadBinding({ triple: 'linux-arm64-gnu', localPaths: ['/nonexistent'], require: fakeRequire({}), prebuilt })).toThrow(
      /linux-arm64-gnu has a prebuilt package: reinstall ferro with optional dependencies enabled/,
    );
  });

  it('reports a package that is installed but cannot load', () => {
    const broken = new Error('/lib/libc.so.6: version `GLIBC_2.99` not found');
    expect(() =>
      loadBinding({ triple: 'linux-x64-gnu', localPaths: ['/nonexistent'], require: fakeRequire({ '@ferro-http/binding-linux-x64-gnu': broken }), prebuilt }),
    ).toThrow(/@ferro-http\/binding-linux-x64-gnu: cannot be loaded: .*GLIBC_2\.99/);
  });
});
