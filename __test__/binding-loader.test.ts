// The native loader: a binary built in the checkout first, then the platform package, otherwise
// an error that names the platform, the package and how to build from source (never a bare
// MODULE_NOT_FOUND).
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadBinding, packageSuffix, platformTriple } from '../ts/native/binding.js';

const realRequire = createRequire(import.meta.url);
const built = join(import.meta.dirname, '..', 'native', `ferro.${platformTriple()}.node`);
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
  });

  it('takes the binary built in the checkout before any package', () => {
    const b = loadBinding({ triple: platformTriple(), localPath: built, require: fakeRequire({ [`@ferro-http/binding-${platformTriple()}`]: 'pkg' }), prebuilt });
    expect(typeof b.NativeEngine).toBe('function');
  });

  it('takes the platform package when nothing was built', () => {
    const b = loadBinding({ triple: 'linux-arm64-gnu', localPath: '/nonexistent/ferro.node', require: fakeRequire({ '@ferro-http/binding-linux-arm64-gnu': { NativeEngine: 'from-package' } }), prebuilt });
    expect(b.NativeEngine).toBe('from-package');
  });

  it('fails on an unsupported platform with the platform, the package and how to build', () => {
    let err: NodeJS.ErrnoException | undefined;
    try {
      loadBinding({ triple: 'freebsd-riscv64', localPath: '/nonexistent/ferro.freebsd-riscv64.node', require: fakeRequire({}), prebuilt });
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    expect(err?.code).toBe('ERR_FERRO_NATIVE_MISSING');
    expect(err?.message).toContain('freebsd-riscv64');
    expect(err?.message).toContain('@ferro-http/binding-freebsd-riscv64: not installed');
    expect(err?.message).toContain('Prebuilt packages exist for: linux-x64-gnu, linux-arm64-gnu, darwin-arm64');
    expect(err?.message).toContain('npm run build:native');
    expect(err?.message).toContain('https://rustup.rs');
  });

  it('says to reinstall with optional dependencies when a supported platform lacks its package', () => {
    expect(() => loadBinding({ triple: 'linux-arm64-gnu', localPath: '/nonexistent', require: fakeRequire({}), prebuilt })).toThrow(
      /linux-arm64-gnu has a prebuilt package: reinstall ferro with optional dependencies enabled/,
    );
  });

  it('reports a package that is installed but cannot load', () => {
    const broken = new Error('/lib/libc.so.6: version `GLIBC_2.99` not found');
    expect(() =>
      loadBinding({ triple: 'linux-x64-gnu', localPath: '/nonexistent', require: fakeRequire({ '@ferro-http/binding-linux-x64-gnu': broken }), prebuilt }),
    ).toThrow(/@ferro-http\/binding-linux-x64-gnu: cannot be loaded: .*GLIBC_2\.99/);
  });
});
