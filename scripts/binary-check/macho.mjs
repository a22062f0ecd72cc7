// Reads a 64-bit Mach-O (the darwin targets): CPU, file type, the dylibs it loads and its symbol
// table's defined and undefined external symbols (names without the leading underscore), each
// undefined one with the library ordinal that binds it.

const CPU = { 0x01000007: 'x86_64', 0x0100000c: 'aarch64' };
const FILETYPE = { 6: 'Mach-O dylib', 8: 'Mach-O bundle' };
const LC_SYMTAB = 0x2;
const LOAD_DYLIB = new Set([0xc, 0x80000018, 0x8000001f, 0x80000023]); // load, weak, reexport, upward
const N_EXT = 0x01;
const N_TYPE = 0x0e;
const N_UNDF = 0x0;
const N_STAB = 0xe0;

const cstr = (buf, off) => buf.toString('latin1', off, buf.indexOf(0, off));
const plain = (name) => (name.startsWith('_') ? name.slice(1) : name);

/** @param {Buffer} buf */
export function readMachO(buf) {
  if (buf.readUInt32LE(0) !== 0xfeedfacf) return null;
  const cpu = buf.readUInt32LE(4);
  const filetype = buf.readUInt32LE(12);
  const ncmds = buf.readUInt32LE(16);
  const needed = [];
  const imports = [];
  const exports = [];
  let o = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(o);
    const size = buf.readUInt32LE(o + 4);
    if (LOAD_DYLIB.has(cmd)) needed.push(cstr(buf, o + buf.readUInt32LE(o + 8)));
    if (cmd === LC_SYMTAB) {
      const symoff = buf.readUInt32LE(o + 8);
      const nsyms = buf.readUInt32LE(o + 12);
      const stroff = buf.readUInt32LE(o + 16);
      for (let s = 0; s < nsyms; s++) {
        const e = symoff + s * 16;
        const type = buf[e + 4];
        if (type & N_STAB || !(type & N_EXT)) continue;
        const name = plain(cstr(buf, stroff + buf.readUInt32LE(e)));
        const desc = buf.readUInt16LE(e + 6);
        // The high byte of n_desc: which LC_LOAD_DYLIB (1-based) binds it; 0xfe: looked up in the
        // process at load time (-undefined dynamic_lookup), as the N-API symbols must be.
        if ((type & N_TYPE) === N_UNDF) imports.push({ name, weak: (desc & 0x80) !== 0, ordinal: desc >> 8 });
        else exports.push(name);
      }
    }
    o += size;
  }
  return { format: FILETYPE[filetype] ?? `Mach-O filetype ${filetype}`, arch: CPU[cpu] ?? `cpu 0x${cpu.toString(16)}`, needed, imports, exports };
}
