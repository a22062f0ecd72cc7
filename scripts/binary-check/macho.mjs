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

const LC_DYLD_INFO = new Set([0x22, 0x80000022]);
const LC_DYLD_CHAINED_FIXUPS = 0x80000034;

const cstr = (buf, off) => buf.toString('latin1', off, buf.indexOf(0, off));

/** An unsigned LEB128 at `p.o`, advancing it. */
function uleb(buf, p) {
  let v = 0;
  let shift = 0;
  for (;;) {
    const b = buf[p.o++];
    v += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return v;
    shift += 7;
  }
}

/**
 * Which library ordinal each bound symbol really binds to, from the dyld bind opcodes (or chained
 * fixups): a linker may leave the nlist ordinal 0 and put flat lookup (-2, here 0xfe) only there.
 */
function bindOrdinals(buf, cmd, o) {
  const out = new Map();
  if (cmd === LC_DYLD_CHAINED_FIXUPS) {
    const base = buf.readUInt32LE(o + 8);
    const imports = base + buf.readUInt32LE(base + 8);
    const symbols = base + buf.readUInt32LE(base + 12);
    const count = buf.readUInt32LE(base + 16);
    const format = buf.readUInt32LE(base + 20);
    for (let i = 0; i < count; i++) {
      if (format === 3) {
        const lo = buf.readUInt32LE(imports + i * 16);
        out.set(cstr(buf, symbols + buf.readUInt32LE(imports + i * 16 + 4)), (lo & 0xffff) >= 0xfff0 ? (lo & 0xff) : lo & 0xffff);
      } else {
        const v = buf.readUInt32LE(imports + i * (format === 2 ? 8 : 4));
        out.set(cstr(buf, symbols + (v >>> 9)), v & 0xff);
      }
    }
    return out;
  }
  // dyld_info_command: bind at +16, lazy bind at +32 (offset, size); weak binds carry no ordinal.
  for (const at of [16, 32]) {
    const p = { o: buf.readUInt32LE(o + at) };
    const end = p.o + buf.readUInt32LE(o + at + 4);
    let ordinal = 0;
    let name = '';
    while (p.o < end) {
      const byte = buf[p.o++];
      const op = byte & 0xf0;
      const imm = byte & 0x0f;
      if (op === 0x10) ordinal = imm;
      else if (op === 0x20) ordinal = uleb(buf, p);
      else if (op === 0x30) ordinal = imm === 0 ? 0 : 0xf0 | imm; // -1, -2, -3 as 0xff, 0xfe, 0xfd
      else if (op === 0x40) {
        name = cstr(buf, p.o);
        p.o += name.length + 1;
      } else if (op === 0x60 || op === 0x70 || op === 0x80 || op === 0xa0) uleb(buf, p);
      else if (op === 0xc0) (uleb(buf, p), uleb(buf, p));
      if (op >= 0x90 && op <= 0xc0) out.set(name, ordinal);
    }
  }
  return out;
}
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
  let binds = new Map();
  let o = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(o);
    const size = buf.readUInt32LE(o + 4);
    if (LOAD_DYLIB.has(cmd)) needed.push(cstr(buf, o + buf.readUInt32LE(o + 8)));
    if (LC_DYLD_INFO.has(cmd) || cmd === LC_DYLD_CHAINED_FIXUPS) binds = bindOrdinals(buf, cmd, o);
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
  for (const s of imports) s.ordinal = binds.get(`_${s.name}`) ?? binds.get(s.name) ?? s.ordinal;
  return { format: FILETYPE[filetype] ?? `Mach-O filetype ${filetype}`, arch: CPU[cpu] ?? `cpu 0x${cpu.toString(16)}`, needed, imports, exports };
}
