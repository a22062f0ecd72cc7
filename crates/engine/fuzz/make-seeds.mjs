// Writes the seed corpora of the ws_frames, decode_body and h2_session fuzz targets (seeds/<target>/).
// Run from anywhere: `node crates/engine/fuzz/make-seeds.mjs` (needs the `zstd` command).
// Input layouts are documented at `check_codec` (ws/check.rs), `check_decoder` (coding/check.rs)
// and `check_session` (h2/check.rs).
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

// --- h2_session: [config, split seed, server bytes...] ------------------------------------
// config (see `Setup` in h2/check.rs): bits 0-1 requests (1-3, streams 1, 3, 5), bit 2 the
// first is HEAD, bit 3 5-byte bodies, bit 4 expect: 100-continue, bit 5 maxResponseSize 64,
// bit 6 unused, bit 7 pool closing. The server's bytes start with its
// SETTINGS (the client preface is the client's to send).
const F = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 };
const END_STREAM = 1, END_HEADERS = 4, PADDED = 8;
function h2frame(type, flags, stream, payload = Buffer.alloc(0)) {
  const p = Buffer.from(payload);
  const head = Buffer.alloc(9);
  head.writeUIntBE(p.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, p]);
}
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
const settings = (...pairs) => h2frame(F.SETTINGS, 0, 0, Buffer.concat(pairs.map(([id, v]) => Buffer.concat([Buffer.from([0, id]), u32(v)]))));
// HPACK (RFC 7541), no Huffman: an indexed field; a literal with an indexed name (without
// indexing); a literal with a new name, added to the dynamic table.
const indexed = (i) => Buffer.from([0x80 | i]);
const STATUS_200 = indexed(8);
const withName = (i, value) => Buffer.concat([Buffer.from([i < 15 ? i : 0x0f, ...(i < 15 ? [] : [i - 15]), value.length]), Buffer.from(value)]);
const status = (code) => withName(8, String(code));
const contentLength = (n) => withName(28, String(n));
const added = (name, value) => Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
const h2 = (name, config, ...frames) => write('h2_session', name, Buffer.concat([Buffer.from([config, 0x5a]), settings(), ...frames]));
h2('one-response', 0,
  h2frame(F.HEADERS, END_HEADERS, 1, Buffer.concat([STATUS_200, contentLength(5)])), h2frame(F.DATA, END_STREAM, 1, 'hello'));
h2('three-streams-trailers', 2,
  h2frame(F.HEADERS, END_HEADERS, 1, Buffer.concat([STATUS_200, contentLength(5)])),
  h2frame(F.HEADERS, END_HEADERS, 3, status(103)),
  h2frame(F.DATA, END_STREAM, 1, 'hello'),
  h2frame(F.HEADERS, END_HEADERS, 3, STATUS_200), h2frame(F.DATA, 0, 3, 'hi'),
  h2frame(F.HEADERS, END_HEADERS | END_STREAM, 3, added('x-t', 'y')),
  h2frame(F.HEADERS, END_HEADERS | END_STREAM, 5, status(404)));
h2('expect-continue', 0x18,
  h2frame(F.HEADERS, END_HEADERS, 1, status(100)), h2frame(F.WINDOW_UPDATE, 0, 1, u32(100)),
  h2frame(F.HEADERS, END_HEADERS, 1, STATUS_200), h2frame(F.DATA, END_STREAM, 1, 'ok'));
h2('goaway', 0x82,
  h2frame(F.HEADERS, END_HEADERS | END_STREAM, 1, STATUS_200), h2frame(F.GOAWAY, 0, 0, Buffer.concat([u32(1), u32(0)])));
h2('refused-then-retried', 1,
  h2frame(F.RST_STREAM, 0, 1, u32(7)), h2frame(F.HEADERS, END_HEADERS | END_STREAM, 3, STATUS_200),
  h2frame(F.HEADERS, END_HEADERS | END_STREAM, 5, STATUS_200));
h2('reset-no-error-after-body', 0,
  h2frame(F.HEADERS, END_HEADERS, 1, STATUS_200), h2frame(F.DATA, 0, 1, 'abc'), h2frame(F.RST_STREAM, 0, 1, u32(0)));
h2('settings-ping-table-continuation', 0,
  settings([1, 256], [4, 1], [5, 16384]), h2frame(F.SETTINGS, 1, 0), h2frame(F.PING, 0, 0, Buffer.alloc(8, 1)),
  h2frame(F.WINDOW_UPDATE, 0, 0, u32(1000)),
  h2frame(F.HEADERS, 0, 1, Buffer.concat([STATUS_200, added('x-a', '1')])),
  h2frame(F.CONTINUATION, END_HEADERS, 1, Buffer.concat([indexed(62), contentLength(3)])),
  h2frame(F.DATA, PADDED | END_STREAM, 1, Buffer.concat([Buffer.from([2]), Buffer.from('abc'), Buffer.alloc(2)])));
h2('body-300-bytes', 0,
  h2frame(F.HEADERS, END_HEADERS, 1, STATUS_200), h2frame(F.DATA, 0, 1, Buffer.alloc(300, 0x61)), h2frame(F.DATA, END_STREAM, 1));
h2('head-method', 0x04, h2frame(F.HEADERS, END_HEADERS | END_STREAM, 1, Buffer.concat([STATUS_200, contentLength(100)])));
h2('over-max-response-size', 0x20,
  h2frame(F.HEADERS, END_HEADERS, 1, STATUS_200), h2frame(F.DATA, END_STREAM, 1, Buffer.alloc(100, 0x62)));
