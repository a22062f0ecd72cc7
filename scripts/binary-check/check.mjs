// The per-binary check pack:all runs on every target: the right file format and CPU, the N-API
// entry point exported, nothing imported that Node's platform does not provide (N-API symbols come
// and libuv from the node process; everything else from system libraries only, and for glibc no symbol
// version above 2.28), and the size. Returns a one-line summary, throws with every problem found.
//
//   node scripts/binary-check/check.mjs <rust triple> <file.node>
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readElf } from './elf.mjs';
import { readMachO } from './macho.mjs';
import { readPe } from './pe.mjs';

/** glibc 2.28: Debian 10, Ubuntu 18.10 / 20.04, RHEL / Rocky / Alma 8, Amazon Linux 2023, Fedora 29. */
export const MAX_GLIBC = [2, 28];
const MAX_SIZE = 32 * 1024 * 1024;
const ENTRY = 'napi_register_module_v1';
/** What the node executable itself exports: N-API, and libuv (the Linux inline driver's loop hooks). */
const isNodeApi = (name) => name.startsWith('napi_') || name.startsWith('node_api_') || name.startsWith('uv_');

const GLIBC_LIBS = new Set(['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1', 'libgcc_s.so.1', 'ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1']);
/** Where Debian's `musl` package keeps musl's libc: imports of the musl binary are checked against it. */
const MUSL_LIBC = { x86_64: '/usr/lib/x86_64-linux-musl/libc.so', aarch64: '/usr/lib/aarch64-linux-musl/libc.so' };
/** DLLs every Windows x64 since 10 has (api-ms-win-* are API sets of the same). */
const WINDOWS_DLLS = new Set(['kernel32.dll', 'ntdll.dll', 'ws2_32.dll', 'bcrypt.dll', 'bcryptprimitives.dll', 'advapi32.dll', 'userenv.dll', 'msvcrt.dll', 'ucrtbase.dll', 'secur32.dll', 'crypt32.dll', 'ole32.dll', 'oleaut32.dll', 'shell32.dll', 'iphlpapi.dll', 'dbghelp.dll', 'user32.dll', 'ncrypt.dll']);

const versionOf = (v) => v.slice(v.indexOf('_') + 1).split('.').map(Number);
const newer = (a, b) => a[0] - b[0] || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0);

function linuxGnu(bin, problems) {
  for (const lib of bin.needed) if (!GLIBC_LIBS.has(lib)) problems.push(`needs ${lib}, not part of glibc / libgcc`);
  let max = [0, 0];
  for (const s of bin.imports) {
    if (isNodeApi(s.name)) continue;
    if (!s.version) {
      if (!s.weak) problems.push(`imports ${s.name} with no symbol version (from no system library)`);
      continue;
    }
    if (s.version.startsWith('GLIBC_') && !s.version.startsWith('GLIBC_PRIVATE') && newer(versionOf(s.version), max) > 0) max = versionOf(s.version);
  }
  if (newer(max, MAX_GLIBC) > 0) {
    const over = bin.imports.filter((s) => s.version?.startsWith('GLIBC_2') && newer(versionOf(s.version), MAX_GLIBC) > 0);
    problems.push(`needs glibc ${max.join('.')} > ${MAX_GLIBC.join('.')}: ${over.map((s) => `${s.name}@${s.version}`).join(', ')}`);
  }
  return `highest glibc symbol version GLIBC_${max.join('.')} (limit ${MAX_GLIBC.join('.')})`;
}

function linuxMusl(bin, arch, problems) {
  for (const lib of bin.needed) if (!/^libc\.(musl-[a-z0-9_]+\.so\.1|so)$/.test(lib) && lib !== 'libgcc_s.so.1') problems.push(`needs ${lib}, not musl's libc / libgcc`);
  const libc = MUSL_LIBC[arch];
  if (!existsSync(libc)) return `imports not checked (no musl libc at ${libc}; Debian: apt-get install musl)`;
  const musl = new Set(readElf(readFileSync(libc)).exports);
  const unwinder = bin.needed.includes('libgcc_s.so.1');
  const missing = bin.imports.filter((s) => !isNodeApi(s.name) && !s.weak && !musl.has(s.name) && !(unwinder && s.name.startsWith('_Unwind_')));
  for (const s of missing) problems.push(`imports ${s.name}, which musl's libc does not define`);
  return `every import in musl's libc (${libc})${unwinder ? ' or libgcc_s' : ''}`;
}

function darwin(bin, problems) {
  for (const lib of bin.needed) if (!lib.startsWith('/usr/lib/') && !lib.startsWith('/System/Library/')) problems.push(`loads ${lib}, not a system library`);
  for (const s of bin.imports) {
    if (isNodeApi(s.name)) {
      if (s.ordinal !== 0xfe) problems.push(`${s.name} is bound to library #${s.ordinal}, not looked up in the node process`);
    } else if (!(s.ordinal >= 1 && s.ordinal <= bin.needed.length)) problems.push(`imports ${s.name} from no library (ordinal ${s.ordinal})`);
  }
  return `N-API looked up in the process, the rest from ${bin.needed.map((l) => l.split('/').pop()).join(', ')}`;
}

function windows(bin, problems) {
  for (const dll of new Set(bin.needed.map((d) => d.toLowerCase()))) {
    if (!WINDOWS_DLLS.has(dll) && !dll.startsWith('api-ms-win-')) problems.push(`imports from ${dll}, which a Windows machine with Node need not have`);
  }
  const fromNode = bin.imports.filter((s) => isNodeApi(s.name));
  return `${fromNode.length ? `N-API imported from ${[...new Set(fromNode.map((s) => s.from))].join(', ')}` : 'N-API resolved at load time'}, system DLLs only (${[...new Set(bin.needed)].join(', ')})`;
}

/** Checks `file` as the binary for `triple`; returns the summary line or throws listing every problem. */
export function checkBinary(triple, file) {
  const buf = readFileSync(file);
  const [cpu, , os, abi] = triple.split('-');
  const expected = os === 'linux' ? readElf : os === 'darwin' ? readMachO : readPe;
  const bin = expected(buf);
  const problems = [];
  if (!bin) throw new Error(`${file}: not the ${os === 'linux' ? 'ELF' : os === 'darwin' ? 'Mach-O' : 'PE'} file a ${triple} binary is`);
  if (bin.arch !== cpu) problems.push(`built for ${bin.arch}, not ${cpu}`);
  if (!/shared object|dylib|bundle|DLL/.test(bin.format)) problems.push(`a ${bin.format}, not a loadable library`);
  if (!bin.exports.includes(ENTRY)) problems.push(`does not export ${ENTRY}`);
  if (buf.length > MAX_SIZE) problems.push(`${buf.length} bytes, over the ${MAX_SIZE}-byte limit`);
  const imports =
    os === 'linux' ? (abi === 'musl' ? linuxMusl(bin, cpu, problems) : linuxGnu(bin, problems)) : os === 'darwin' ? darwin(bin, problems) : windows(bin, problems);
  if (problems.length) throw new Error(`${file} (${triple}):\n    ${problems.join('\n    ')}`);
  return `${bin.format} ${bin.arch}, exports ${ENTRY}, ${bin.imports.length} imports: ${imports}; ${(buf.length / 1048576).toFixed(2)} MiB`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [triple, file] = process.argv.slice(2);
  console.log(checkBinary(triple, file));
}
