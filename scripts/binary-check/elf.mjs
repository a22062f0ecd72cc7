// Reads what the binary check needs from a 64-bit little-endian ELF shared object (every Linux
// target ferro ships): machine, the libraries it needs, its dynamic symbols and, for each imported
// symbol, the version it asks for (GLIBC_2.17 ...). Section headers survive `strip = "symbols"`.

const MACHINE = { 0x3e: 'x86_64', 0xb7: 'aarch64' };
const SHT_DYNSYM = 11;
const SHT_DYNAMIC = 6;
const SHT_GNU_VERSYM = 0x6fffffff;
const SHT_GNU_VERNEED = 0x6ffffffe;
const DT_NEEDED = 1;

const cstr = (buf, off) => buf.toString('latin1', off, buf.indexOf(0, off));

/** @param {Buffer} buf */
export function readElf(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46) return null;
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('ELF: only 64-bit little-endian objects are expected');
  const type = buf.readUInt16LE(16);
  const machine = MACHINE[buf.readUInt16LE(18)] ?? `machine 0x${buf.readUInt16LE(18).toString(16)}`;
  const shoff = Number(buf.readBigUInt64LE(40));
  const shentsize = buf.readUInt16LE(58);
  const shnum = buf.readUInt16LE(60);
  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    sections.push({
      type: buf.readUInt32LE(o + 4),
      offset: Number(buf.readBigUInt64LE(o + 24)),
      size: Number(buf.readBigUInt64LE(o + 32)),
      link: buf.readUInt32LE(o + 40),
      info: buf.readUInt32LE(o + 44),
    });
  }
  const find = (t) => sections.find((s) => s.type === t);
  const dynsym = find(SHT_DYNSYM);
  if (!dynsym) throw new Error('ELF: no .dynsym: not a shared object');
  const strtab = sections[dynsym.link].offset;

  // Version needs: index → { file, version }.
  const versions = new Map();
  const verneed = find(SHT_GNU_VERNEED);
  if (verneed) {
    const vstr = sections[verneed.link].offset;
    let o = verneed.offset;
    for (let n = 0; n < verneed.info; n++) {
      const file = cstr(buf, vstr + buf.readUInt32LE(o + 4));
      let a = o + buf.readUInt32LE(o + 8);
      for (let k = 0; k < buf.readUInt16LE(o + 2); k++) {
        versions.set(buf.readUInt16LE(a + 6) & 0x7fff, { file, version: cstr(buf, vstr + buf.readUInt32LE(a + 8)) });
        a += buf.readUInt32LE(a + 12);
      }
      o += buf.readUInt32LE(o + 12);
    }
  }
  const versym = find(SHT_GNU_VERSYM);

  const imports = [];
  const exports = [];
  for (let i = 1; i < dynsym.size / 24; i++) {
    const o = dynsym.offset + i * 24;
    const name = cstr(buf, strtab + buf.readUInt32LE(o));
    const bind = buf[o + 4] >> 4; // 1 global, 2 weak
    const shndx = buf.readUInt16LE(o + 6);
    if (!name || bind === 0) continue;
    if (shndx === 0) {
      const v = versym ? versions.get(buf.readUInt16LE(versym.offset + i * 2) & 0x7fff) : undefined;
      imports.push({ name, weak: bind === 2, version: v?.version, from: v?.file });
    } else exports.push(name);
  }

  const needed = [];
  const dynamic = find(SHT_DYNAMIC);
  if (dynamic) {
    const dstr = sections[dynamic.link].offset;
    for (let o = dynamic.offset; o < dynamic.offset + dynamic.size; o += 16) {
      const tag = Number(buf.readBigInt64LE(o));
      if (tag === 0) break;
      if (tag === DT_NEEDED) needed.push(cstr(buf, dstr + Number(buf.readBigUInt64LE(o + 8))));
    }
  }
  return { format: type === 3 ? 'ELF shared object' : `ELF type ${type}`, arch: machine, needed, imports, exports };
}
