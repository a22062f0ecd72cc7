// The one reader of the framing every batch from the engine uses (crates/engine/src/events.rs):
// engine events, DNS results and WebSocket codec events are each a run of frames
// `kind u8 | id u32 LE | len u32 LE | payload[len]`. Payload fields are read by their own decoders.
import { Buffer } from 'node:buffer';

/** Bytes of a frame's header (the engine's `events::HEADER`). */
export const HEADER = 9;

/** Little-endian u16 at `o`. */
export const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
/** Little-endian u32 at `o` (never negative). */
export const u32 = (b: Uint8Array, o: number): number =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) + b[o + 3]! * 0x1000000;

/**
 * A cursor over a batch's frames: each `next()` moves to the next frame and exposes its `kind`,
 * `id` and payload bounds `start`..`end` in the batch. A cursor, not a generator: the HTTP event
 * loop runs per response, and this costs no object per frame.
 */
class Frames {
  kind = 0;
  id = 0;
  start = 0;
  end = 0;

  constructor(private readonly batch: Uint8Array) {}

  /** False once the batch is done; a torn tail (never written by the engine) is not a frame. */
  next(): boolean {
    const b = this.batch;
    const o = this.end;
    if (o + HEADER > b.length) return false;
    const start = o + HEADER;
    const end = start + u32(b, o + 5);
    if (end > b.length) return false;
    this.kind = b[o]!;
    this.id = u32(b, o + 1);
    this.start = start;
    this.end = end;
    return true;
  }
}

/** The frames of `batch`: `for (const f = frames(batch); f.next(); ) …`. */
export function frames(batch: Uint8Array): Frames {
  return new Frames(batch);
}

/**
 * The batch the binding delivered: a Buffer of its own, or (`offset` given) a small batch's place
 * in the binding's arena, an ArrayBuffer later batches fill further (src/queue.rs, `Arena`).
 */
export function deliveredBatch(data: Buffer | ArrayBuffer, offset?: number, length?: number): Buffer {
  return offset === undefined ? (data as Buffer) : Buffer.from(data as ArrayBuffer, offset, length);
}
