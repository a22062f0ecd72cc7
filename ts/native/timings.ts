// Request timings (crates/engine/src/timings.rs). The engine stamps when each phase ended as ms
// since an instant of its own, on the monotonic clock libuv reads; HEAD and END events carry the
// stamps at the end of their payloads. This places that instant on performance.now()'s clock (its
// origin is per thread, so each thread works it out once) and reads the stamps.
import { performance } from 'node:perf_hooks';
import type { RequestTimings } from '../core/types.js';
import { binding } from './binding.js';

/** Bytes of HEAD's stamps: queued, dns, connect, tls, sent, first byte, each an f64. */
export const HEAD_STAMPS = 48;
/** Bytes of END's stamp. */
export const END_STAMP = 8;

let epoch: number | undefined;

/** Where the engine's stamps count from, on performance.now()'s clock (ms). */
function engineEpoch(): number {
  const [stamp, hrtime] = binding.timingsAnchor() as [number, number];
  if (hrtime >= 0) {
    // process.hrtime reads uv_hrtime too: one reading of it, bracketed by two of performance.now(),
    // takes the anchor's hrtime to performance.now() terms.
    const before = performance.now();
    const hrNow = process.hrtime.bigint();
    const after = performance.now();
    epoch = (before + after) / 2 - Number(hrNow - BigInt(Math.round(hrtime))) / 1e6 - stamp / 1e6;
  } else {
    // No libuv clock reading (Windows): a second call, bracketed by two reads, is the anchor.
    const before = performance.now();
    const [again] = binding.timingsAnchor() as [number, number];
    const after = performance.now();
    epoch = (before + after) / 2 - again / 1e6;
  }
  return epoch;
}

/** The timings object a request hands out; the engine's END fills in `end`. */
export type LiveTimings = { -readonly [K in keyof RequestTimings]: number };

// The stamps are copied byte by byte into a scratch array and read as doubles: cheaper than six
// readDoubleLE calls (they run per response). The engine writes them little-endian, the byte order
// of every platform ferro ships for (os.endianness() 'LE').
const scratch = new Float64Array(6);
const scratchBytes = new Uint8Array(scratch.buffer);

/** Stamp `i` of the scratch array on performance.now()'s clock. */
const at = (i: number, epochMs: number): number => {
  const v = scratch[i]!;
  return v === 0 ? 0 : v + epochMs;
};

/** HEAD's stamps at `o` (the payload's last HEAD_STAMPS bytes); `end` is 0 until END. */
export function headTimings(b: Buffer, o: number): LiveTimings {
  const e = epoch ?? engineEpoch();
  for (let i = 0; i < HEAD_STAMPS; i++) scratchBytes[i] = b[o + i]!;
  return {
    queued: at(0, e),
    dns: at(1, e),
    connect: at(2, e),
    tls: at(3, e),
    requestSent: at(4, e),
    firstByte: at(5, e),
    end: 0,
  };
}

/** END's stamp at `o`. */
export function endStamp(b: Buffer, o: number): number {
  const e = epoch ?? engineEpoch();
  for (let i = 0; i < END_STAMP; i++) scratchBytes[i] = b[o + i]!;
  return at(0, e);
}
