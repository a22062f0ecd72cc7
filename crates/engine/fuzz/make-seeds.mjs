// Writes the seed corpora of the ws_frames and decode_body fuzz targets (seeds/<target>/).
// Run from anywhere: `node crates/engine/fuzz/make-seeds.mjs` (needs the `zstd` command).
// Input layouts are documented at `check_codec` (ws/check.rs) and `check_decoder` (decode/check.rs).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));

function write(target, name, bytes) {
  const dir = join(here, 'seeds', target);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), bytes);
}

// --- ws_frames: [config, split seed, server bytes...] -------------------------------------
// config: bit 0 permessage-deflate, bit 1 server_no_context_takeover, bits 2-3 message limit
// (125 B, 1 KiB, 64 KiB, 1 MiB).
function frame(fin, rsv1, opcode, payload = Buffer.alloc(0)) {
  const p = Buffer.from(payload);
  let head;
  if (p.length < 126) head = Buffer.from([p.length]);
  else if (p.length <= 0xffff) head = Buffer.from([126, p.length >> 8, p.length & 0xff]);
  else {
    head = Buffer.alloc(9);
    head[0] = 127;
    head.writeBigUInt64BE(BigInt(p.length), 1);
  }
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]), head, p]);
}
const deflated = (text) => {
  const z = zlib.deflateRawSync(Buffer.from(text), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  return z.subarray(0, z.length - 4); // RFC 7692: the 00 00 FF FF tail is left off
};
const ws = (name, config, ...frames) => write('ws_frames', name, Buffer.concat([Buffer.from([config, 0x5a]), ...frames]));
const TEXT = 1, BINARY = 2, CLOSE = 8, PING = 9, PONG = 10, CONT = 0;
ws('text', 0x04, frame(true, false, TEXT, 'hello'));
ws('binary-16bit-length', 0x08, frame(true, false, BINARY, Buffer.alloc(300, 7)));
// The 64-bit length form (over a short payload, to keep the seed small).
ws('binary-64bit-length', 0x0c, Buffer.from([0x82, 127, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]));
ws('fragments-with-controls', 0x04,
  frame(false, false, TEXT, 'hé'), frame(true, false, PING, 'p'), frame(false, false, CONT, ''),
  frame(true, false, PONG, 'q'), frame(true, false, CONT, 'llo'));
ws('utf8-split-across-fragments', 0x04, frame(false, false, TEXT, Buffer.from([0xe2, 0x82])), frame(true, false, CONT, Buffer.from([0xac])));
ws('close-with-reason', 0x04, frame(true, false, CLOSE, Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65])), frame(true, false, TEXT, 'late'));
ws('close-empty', 0x04, frame(true, false, CLOSE));
ws('close-bad-code', 0x04, frame(true, false, CLOSE, Buffer.from([0x03, 0xed])));
ws('masked', 0x04, Buffer.from([0x81, 0x82, 1, 2, 3, 4, 0x69, 0x6b]));
ws('too-big', 0x00, frame(true, false, BINARY, Buffer.alloc(200)));
ws('deflated', 0x05, frame(true, true, TEXT, deflated('hello hello hello')), frame(true, true, TEXT, deflated('hello hello hello')));
ws('deflated-fragmented', 0x07,
  frame(false, true, BINARY, deflated('abcabcabcabc').subarray(0, 3)), frame(true, false, PING),
  frame(true, false, CONT, deflated('abcabcabcabc').subarray(3)));
ws('deflate-bomb', 0x05, frame(true, true, BINARY, deflated(Buffer.alloc(100000))));

// --- decode_body: [config, codings, split seed, body...] ----------------------------------
// config: bits 0-1 number of codings - 1, bits 2-3 size limit (256 B, 4 KiB, 64 KiB, 1 MiB),
// bit 4 lenient; codings: two bits each in decoding order (0 gzip, 1 deflate, 2 br, 3 zstd).
const text = Buffer.from('line 1: the quick brown fox\n'.repeat(40));
const enc = [
  (b) => zlib.gzipSync(b),
  (b) => zlib.deflateSync(b),
  (b) => zlib.brotliCompressSync(b),
  (b) => execFileSync('zstd', ['-q', '-c', '-3'], { input: b }),
];
/** `order`: codings in decoding order (the first is undone first, so it was applied last). */
function body(name, order, { limit = 3, lenient = false, payload = text, raw } = {}) {
  let b = payload;
  for (let i = order.length - 1; i >= 0; i--) b = enc[order[i]](b);
  if (raw) b = raw(b);
  const codings = order.reduce((acc, c, i) => acc | (c << (2 * i)), 0);
  const config = (order.length - 1) | (limit << 2) | (lenient ? 16 : 0);
  write('decode_body', name, Buffer.concat([Buffer.from([config, codings, 0x33]), b]));
}
body('gzip', [0]);
body('zlib', [1]);
body('raw-deflate', [1], { raw: () => zlib.deflateRawSync(text) });
body('br', [2]);
body('zstd', [3]);
body('gzip-then-br', [0, 2]);
body('zstd-gzip-deflate', [3, 0, 1]);
body('gzip-two-members', [0], { raw: (b) => Buffer.concat([b, zlib.gzipSync('more')]) });
body('gzip-trailing-bytes', [0], { raw: (b) => Buffer.concat([b, Buffer.from('xy'), zlib.gzipSync('more')]) });
body('zstd-two-frames', [3], { raw: (b) => Buffer.concat([b, enc[3](Buffer.from('more'))]) });
body('truncated-lenient', [0], { lenient: true, raw: (b) => b.subarray(0, b.length - 10) });
body('gzip-bomb-limited', [0], { limit: 1, payload: Buffer.alloc(200000) });
body('br-bomb-chained', [2, 0], { limit: 2, payload: Buffer.alloc(500000) });
body('empty', [2], { raw: () => Buffer.alloc(0) });
