// Which prebuilt package fits this process: the platform as the binary packages name it
// (`linux-x64-gnu`, `linux-x64-musl`, `darwin-arm64`, `win32-x64-gnu`), libc included on Linux.
import { readFileSync } from 'node:fs';

export type Libc = 'gnu' | 'musl';

/** What libc detection reads; replaceable in tests. */
export interface LibcProbe {
  /** The text of /usr/bin/ldd (a shell script on glibc, a link to musl's loader on musl), null if unreadable. */
  ldd(): string | null;
  /** `process.report`'s header.glibcVersionRuntime: set only in a Node linked against glibc. */
  glibcVersionRuntime(): string | undefined;
}

const systemProbe: LibcProbe = {
  ldd() {
    try {
      return readFileSync('/usr/bin/ldd', 'latin1');
    } catch {
      return null;
    }
  },
  glibcVersionRuntime() {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header?.glibcVersionRuntime;
  },
};

/**
 * glibc or musl. /usr/bin/ldd answers cheaply on nearly every distribution; when it is missing or
 * names neither (a slim container), the running Node's own report decides, which is slower.
 */
export function detectLibc(probe: LibcProbe = systemProbe): Libc {
  const ldd = probe.ldd();
  if (ldd?.includes('musl')) return 'musl';
  if (ldd && /GNU C Library|glibc|GLIBC/.test(ldd)) return 'gnu';
  return probe.glibcVersionRuntime() ? 'gnu' : 'musl';
}

/**
 * This process's platform as the binary packages name it. Windows binaries are built with the
 * x86_64-pc-windows-gnu target (README "Install matrix" says why), hence `win32-x64-gnu`.
 */
export function platformTriple(platform: string = process.platform, arch: string = process.arch, libc: () => Libc = detectLibc): string {
  if (platform === 'linux') return `linux-${arch}-${libc()}`;
  if (platform === 'win32') return `win32-${arch}-gnu`;
  return `${platform}-${arch}`;
}

const ARCH: Record<string, string> = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' };

/** A Rust target (`aarch64-unknown-linux-gnu`) as a package suffix (`linux-arm64-gnu`). */
export function packageSuffix(target: string): string {
  const [cpu, , os, abi] = target.split('-');
  const arch = ARCH[cpu] ?? cpu;
  if (os === 'linux') return `linux-${arch}-${abi ?? 'gnu'}`;
  if (os === 'darwin') return `darwin-${arch}`;
  if (os === 'windows') return `win32-${arch}-${abi ?? 'gnu'}`;
  return `${os}-${arch}`;
}
