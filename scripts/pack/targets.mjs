// How pack:all builds one Rust target from a Linux x64 machine, with tools from package registries
// only: cargo-zigbuild (crates.io or PyPI) with Zig (PyPI `ziglang`) as the C compiler and linker
// for every target, which also pins Linux gnu binaries to glibc 2.28's symbol versions. A target
// whose Rust standard library is not installed (rustup reaches no download server here) gets it
// compiled from source with -Zbuild-std, from a rustc that has its source: rustup's with rust-src,
// else Debian's rustc-web with rust-web-src (/usr/bin/rustc).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MAX_GLIBC } from '../binary-check/check.mjs';

const ARCH = { x86_64: 'x64', aarch64: 'arm64' };

/** x86_64-unknown-linux-gnu → linux-x64-gnu (the npm/ folder and the package suffix). */
export function suffix(triple) {
  const [cpu, , os, abi] = triple.split('-');
  if (os === 'linux') return `linux-${ARCH[cpu] ?? cpu}-${abi}`;
  if (os === 'darwin') return `darwin-${ARCH[cpu] ?? cpu}`;
  return `win32-${ARCH[cpu] ?? cpu}-${abi}`;
}

/** The file cargo leaves for the cdylib `ferro` on that target. */
export function cdylibName(triple) {
  if (triple.includes('-windows-')) return 'ferro.dll';
  if (triple.includes('-apple-')) return 'libferro.dylib';
  return 'libferro.so';
}

const sysroot = (rustc) => spawnSync(rustc, ['--print', 'sysroot'], { encoding: 'utf8' }).stdout?.trim();

/** A rustc that can build for `triple`: its installed std, or its std source for -Zbuild-std. */
function pickRustc(triple) {
  const candidates = [process.env.FERRO_CROSS_RUSTC, 'rustc', '/usr/bin/rustc'].filter(Boolean);
  for (const rustc of candidates) {
    const root = sysroot(rustc);
    if (root && existsSync(join(root, 'lib', 'rustlib', triple, 'lib'))) return { rustc, buildStd: false };
  }
  for (const rustc of candidates) {
    const root = sysroot(rustc);
    if (root && existsSync(join(root, 'lib', 'rustlib', 'src', 'rust', 'library', 'std'))) return { rustc, buildStd: true };
  }
  throw new Error(
    `pack-all: no Rust standard library for ${triple}: \`rustup target add ${triple}\`, or the standard library's source ` +
      '(`rustup component add rust-src`; on Debian `apt-get install rustc-web rust-web-src`)',
  );
}

/**
 * The cargo command and environment that build `triple` (release profile unless `dev`) into
 * `targetDir` (`stage`: a folder for build inputs pack:all makes); the artifact is `${targetDir}/${triple}/${profile}/${cdylibName(triple)}`.
 */
export function buildCommand(triple, { dev, targetDir, stage }) {
  if (!/^(x86_64|aarch64)-(unknown-linux-(gnu|musl)|apple-darwin|pc-windows-gnu)$/.test(triple)) {
    const hint = triple === 'x86_64-pc-windows-msvc' ? ' (it needs the MSVC libraries, which no registry here has: the Windows package is built from x86_64-pc-windows-gnu, see README "Install matrix")' : '';
    throw new Error(`pack-all: cannot build ${triple} here${hint}`);
  }
  const { rustc, buildStd } = pickRustc(triple);
  // cargo-zigbuild reads a glibc version after the triple; it builds for the bare triple.
  const zigTarget = triple.endsWith('-gnu') && triple.includes('-linux-') ? `${triple}.${MAX_GLIBC.join('.')}` : triple;
  const env = { CARGO_TARGET_DIR: targetDir, RUSTC: rustc };
  const rustflags = [];
  // A cdylib on musl links musl's libc dynamically, as the musl Node that loads it does.
  if (triple.endsWith('-musl')) rustflags.push('-C', 'target-feature=-crt-static');
  if (rustflags.length) env[`CARGO_TARGET_${triple.toUpperCase().replaceAll('-', '_')}_RUSTFLAGS`] = rustflags.join(' ');
  const argv = ['zigbuild', '--lib', '--target', zigTarget, ...(dev ? [] : ['--release'])];
  if (triple.endsWith('-windows-gnu')) {
    // napi's build script for windows-gnu insists on a libnode.dll to link (MSYS2's Node). Ours
    // looks N-API up in node.exe at load time (dyn-symbols, Cargo.toml), so an empty stand-in and
    // an empty import archive satisfy it and nothing is imported from it. The folder is also on
    // the link path (napi's build script puts it there): Rust's windows-gnu std asks for GCC's
    // libssp / libssp_nonshared, which Zig's MinGW does not have and whose stack-protector symbols
    // nothing here uses (the binary check would name any unresolved import), so empty ones too.
    const stubs = join(stage, 'windows-gnu-link');
    mkdirSync(stubs, { recursive: true });
    writeFileSync(join(stubs, 'libnode.dll'), '');
    for (const lib of ['libnode.a', 'libssp.a', 'libssp_nonshared.a']) writeFileSync(join(stubs, lib), '!<arch>\n');
    env.LIBNODE_PATH = stubs;
  }
  if (triple.endsWith('-apple-darwin')) {
    // rustc strips Mach-O files with rust-objcopy, found in its sysroot or on PATH; Debian's
    // rustc-web has none, rustup's toolchain does.
    const objcopy = ['rustc', '/usr/bin/rustc']
      .map((r) => sysroot(r) && join(sysroot(r), 'lib', 'rustlib', 'x86_64-unknown-linux-gnu', 'bin'))
      .find((dir) => dir && existsSync(join(dir, 'rust-objcopy')));
    if (objcopy) env.PATH = `${objcopy}${delimiter}${process.env.PATH}`;
  }
  if (buildStd) {
    env.RUSTC_BOOTSTRAP = '1'; // -Zbuild-std on a stable toolchain
    argv.push('-Zbuild-std=std,panic_unwind');
  }
  return { cmd: 'cargo', argv, env, artifact: join(targetDir, triple, dev ? 'debug' : 'release', cdylibName(triple)) };
}
