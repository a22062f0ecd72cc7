// Reads a PE32+ DLL (the Windows target): machine, the DLLs it imports from (normal and delay-load)
// with each imported name, and the names it exports.

const MACHINE = { 0x8664: 'x86_64', 0xaa64: 'aarch64' };
const IMAGE_FILE_DLL = 0x2000;

const cstr = (buf, off) => buf.toString('latin1', off, buf.indexOf(0, off));

/** @param {Buffer} buf */
export function readPe(buf) {
  if (buf.readUInt16LE(0) !== 0x5a4d) return null;
  const pe = buf.readUInt32LE(0x3c);
  if (buf.readUInt32LE(pe) !== 0x4550) return null;
  const machine = buf.readUInt16LE(pe + 4);
  const nsections = buf.readUInt16LE(pe + 6);
  const optSize = buf.readUInt16LE(pe + 20);
  const characteristics = buf.readUInt16LE(pe + 22);
  const opt = pe + 24;
  if (buf.readUInt16LE(opt) !== 0x20b) throw new Error('PE: only PE32+ images are expected');
  const dir = (i) => ({ rva: buf.readUInt32LE(opt + 112 + i * 8), size: buf.readUInt32LE(opt + 116 + i * 8) });
  const sections = [];
  for (let i = 0; i < nsections; i++) {
    const s = opt + optSize + i * 40;
    sections.push({ va: buf.readUInt32LE(s + 12), vsize: Math.max(buf.readUInt32LE(s + 8), buf.readUInt32LE(s + 16)), raw: buf.readUInt32LE(s + 20) });
  }
  const at = (rva) => {
    const s = sections.find((x) => rva >= x.va && rva < x.va + x.vsize);
    if (!s) throw new Error(`PE: RVA 0x${rva.toString(16)} is in no section`);
    return rva - s.va + s.raw;
  };

  const exports = [];
  const ex = dir(0);
  if (ex.rva) {
    const e = at(ex.rva);
    const names = at(buf.readUInt32LE(e + 32));
    for (let i = 0; i < buf.readUInt32LE(e + 24); i++) exports.push(cstr(buf, at(buf.readUInt32LE(names + i * 4))));
  }

  const imports = [];
  const needed = [];
  /** One import table; `entry` is each descriptor's size, `nameAt` / `thunkAt` where its fields are. */
  const table = (d, entry, nameAt, thunkAt) => {
    if (!d.rva) return;
    for (let o = at(d.rva); buf.readUInt32LE(o + nameAt) !== 0; o += entry) {
      const dll = cstr(buf, at(buf.readUInt32LE(o + nameAt)));
      needed.push(dll);
      const thunks = buf.readUInt32LE(o + thunkAt) || buf.readUInt32LE(o + 16);
      for (let t = at(thunks); ; t += 8) {
        const v = buf.readBigUInt64LE(t);
        if (v === 0n) break;
        const byOrdinal = (v >> 63n) === 1n;
        imports.push({ name: byOrdinal ? `#${Number(v & 0xffffn)}` : cstr(buf, at(Number(v & 0x7fffffffn)) + 2), from: dll });
      }
    }
  };
  table(dir(1), 20, 12, 0); // IMAGE_IMPORT_DESCRIPTOR: OriginalFirstThunk at 0, Name at 12
  table(dir(13), 32, 4, 16); // delay-load descriptor: DllName at 4, ImportNameTable at 16

  return {
    format: characteristics & IMAGE_FILE_DLL ? 'PE32+ DLL' : 'PE32+ executable',
    arch: MACHINE[machine] ?? `machine 0x${machine.toString(16)}`,
    needed,
    imports,
    exports,
  };
}
