// Decodes one batch of packed engine events (format: crates/engine/src/events.rs, walked by
// frames.ts) and hands each to the request or pool it belongs to. Header objects are built here,
// once, as strings: byte strings, each byte one code point (latin1), as undici hands them out
// (DESIGN §5). The kinds of every batch the engine sends (engine and WebSocket events, DNS
// results) are numbered here, in one space.
// Imported, not the global: Node's global `Buffer` is an accessor, read on every use.
import { Buffer } from 'node:buffer';
import type { IncomingHeaders } from '../core/types.js';
import { binding } from './binding.js';
import { ErrorCode } from './error-codes.js';
import { END_STAMP, HEAD_STAMPS, endStamp, headTimings, type LiveTimings } from './timings.js';
import { frames, u16, u32 } from './frames.js';

export const HEAD = 1;
export const DATA = 2;
export const END = 3;
export const ERROR = 4;
export const CONNECTED = 5;
export const DISCONNECTED = 6;
export const CONNECT_FAILED = 7;
export const RETRY = 8;
export const UPGRADE = 9;
export const BODY_DRAIN = 10;
export const BRIDGE_OPEN = 11;
export const BRIDGE_WRITE = 12;
export const BRIDGE_END = 13;
export const BRIDGE_CLOSE = 14;
export const BRIDGE_DRAIN = 15;
export const CONNECTING = 16;
export const SENT = 17;
/** DATA whose bytes came beside the batch, as a Buffer of their own (src/queue.rs). */
export const DATA_OWN = 18;
/** A lookup's addresses (ts/native/resolver.ts). */
export const DNS_ADDRESSES = 19;
/** A lookup's failure: its code and message. */
export const DNS_ERROR = 20;
/** WebSocket session events (crates/engine/src/ws/channel.rs writes them). */
export const WS_TEXT = 21;
export const WS_BINARY = 22;
export const WS_PING = 23;
export const WS_PONG = 24;
export const WS_CLOSE = 25;
export const WS_FAIL = 26;

/** Request flags passed with dispatch, named as crates/engine/src/request.rs's `flags`. */
export const RequestFlag = {
  IDEMPOTENT: 1,
  /** No further pipelining on the connection until this request's headers arrived. */
  BLOCKING: 2,
  /** Send `connection: close` and close the connection after the response. */
  RESET: 4,
  /** An upgrade or CONNECT: the connection becomes a tunnel, never pipelined or reused. */
  UPGRADE: 8,
  /** The body arrives in pieces after dispatch. */
  STREAM_BODY: 16,
  /** JS watches this request (diagnostics): report SENT when its head is written. */
  OBSERVE: 32,
  /** Send `expect: 100-continue` and hold the body until a 100 arrives. */
  EXPECT_CONTINUE: 64,
  /** A WebSocket handshake: the engine holds its upgraded connection for its WebSocket session. */
  WEBSOCKET: 128,
} as const;

export interface RequestSink {
  /** `timings`: the request's (native/timings.ts); a new object for each head. */
  onEngineHead(status: number, reason: string, headers: IncomingHeaders, raw: string[], timings: LiveTimings | undefined): void;
  onEngineData(chunk: Buffer): void;
  /** `ended`: when the response ended, on performance.now()'s clock. */
  onEngineEnd(trailers: IncomingHeaders, raw: string[], ended: number): void;
  /** `socket`: the connection it happened on (an error record's socket field; '' for none). */
  onEngineError(code: number, errno: string, message: string, socket: string): void;
  onEngineRetry(): void;
  /** 101 / CONNECT 2xx: the connection is now a tunnel; DATA and END carry its bytes. */
  onEngineUpgrade(status: number, reason: string, headers: IncomingHeaders, raw: string[], addrs: string): void;
  /**
   * The request's pipe (streamed body or tunnel) has room again. `taken`: a WebSocket session's
   * count of the bytes it took from the pipe so far (0 from others).
   */
  onEngineBodyDrain(taken: number): void;
  /** The head went out on a connection with these addresses (only for requests sent with OBSERVE). */
  onEngineSent?(addrs: string): void;
  /** A WebSocket session's whole message (crates/engine/src/ws/session.rs; text decoded). */
  onWsMessage?(data: string | Buffer): void;
  onWsPing?(data: Buffer): void;
  onWsPong?(data: Buffer): void;
  /** The server's close frame; `code` 0 when it carried none. */
  onWsClose?(code: number, reason: string): void;
  /** The engine failed the connection; its close frame with `code` went out. */
  onWsFail?(code: number, reason: string): void;
}

/** Where a batch finds the request an event belongs to (native/request-table.ts). */
export interface RequestLookup {
  get(id: number): RequestSink | undefined;
}

export interface PoolSink {
  /** A connection attempt starts. */
  onEngineConnecting?(): void;
  /** `info` is "<h1|h2>|<addrs>" (addresses as UPGRADE carries them). */
  onEngineConnected(info: string): void;
  onEngineDisconnected(code: number, message: string, socket: string): void;
  /** `socket`: the error record's socket field (for a refused address, the one tried). */
  onEngineConnectFailed(code: number, errno: string, message: string, socket: string): void;
  /** A bridged pool needs a socket for bridge `bridgeId` (ts/dispatcher/engine/bridged-sockets.ts). */
  onEngineBridgeOpen?(bridgeId: number): void;
}

/** One bridged socket: what the engine asks of it. */
export interface BridgeSink {
  onBridgeWrite(chunk: Buffer): void;
  onBridgeEnd(): void;
  /** The engine is done with the socket. */
  onBridgeClose(): void;
  /** The engine took what it was fed: a paused socket may resume. */
  onBridgeDrain(): void;
}

// Node's Buffer has these fast decoders (what toString uses underneath); @types/node doesn't list them.
type Batch = Buffer & {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
};

// Names the engine sends as an index (crates/engine/src/header_names.rs): the same two strings for
// every response, the name as sent and its key, instead of a slice and a lowercase copy each time.
const KNOWN_NAME = 0x8000;
const knownRaw: readonly string[] = binding.knownHeaderNames();
const knownKey: readonly string[] = knownRaw.map((n) => n.toLowerCase());
// Which known keys a head has set so far, without a lookup on its headers object (a keyed load
// there is megamorphic: one site, every header name): a key's slot holds the serial number of the
// last head that set it. Names that lowercase alike share a slot.
const knownSlot: readonly number[] = knownKey.map((k) => knownKey.indexOf(k));
const knownSetIn = new Uint32Array(knownRaw.length);
let headSerial = 0;

/**
 * The raw list of a response without trailers, nearly every one: one array for all (sinks only
 * read it; rawTrailers hands out a new list of Buffers).
 */
const NO_TRAILERS: string[] = Object.freeze([]) as unknown as string[];

/** Reads a header list at `o` into `out` (lowercased keys, repeated names become arrays) and `raw`. */
function readHeaders(b: Batch, o: number, out: IncomingHeaders, raw: string[]): number {
  const count = u16(b, o);
  o += 2;
  let serial = ++headSerial;
  if (serial === 0xffffffff) {
    knownSetIn.fill(0);
    headSerial = serial = 1;
  }
  // Once a name outside the table was set, a known one may share its key: look it up as usual.
  let unknownSet = false;
  for (let i = 0; i < count; i++) {
    const nl = u16(b, o);
    o += 2;
    let name: string;
    let key: string;
    let firstKnown = false;
    if (nl & KNOWN_NAME) {
      name = knownRaw[nl & ~KNOWN_NAME]!;
      key = knownKey[nl & ~KNOWN_NAME]!;
      const slot = knownSlot[nl & ~KNOWN_NAME]!;
      firstKnown = !unknownSet && knownSetIn[slot] !== serial;
      knownSetIn[slot] = serial;
    } else {
      name = b.latin1Slice(o, o + nl);
      key = name.toLowerCase();
      o += nl;
      unknownSet = true;
    }
    const vl = u32(b, o);
    o += 4;
    // Never UTF-8: bytes 0x80-0xFF would come out replaced, and could not be sent on again.
    const value = b.latin1Slice(o, o + vl);
    o += vl;
    raw.push(name, value);
    if (firstKnown) {
      out[key] = value;
      continue;
    }
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (typeof prev === 'string') out[key] = [prev, value];
    else prev.push(value);
  }
  return o;
}

// readHead's status and reason, beside the offset it returns: no result object per response.
let headStatus = 0;
let headReason = '';

/**
 * Reads status, reason (into headStatus / headReason) and the header list (into `headers` and
 * `raw`) of a HEAD or UPGRADE payload; returns where the list stops.
 */
function readHead(b: Batch, o: number, headers: IncomingHeaders, raw: string[]): number {
  headStatus = u16(b, o);
  const rl = u16(b, o + 2);
  // Nearly every response says "OK": one string for all of them rather than a slice each.
  headReason = rl === 2 && b[o + 4] === 0x4f && b[o + 5] === 0x4b ? 'OK' : b.latin1Slice(o + 4, o + 4 + rl);
  return readHeaders(b, o + 4 + rl, headers, raw);
}

/** An error record: code, errno, the connection it happened on ('' for none), message. */
function readError(b: Batch, o: number, end: number): [number, string, string, string] {
  const code = u16(b, o);
  const el = u16(b, o + 2);
  const errno = b.latin1Slice(o + 4, o + 4 + el);
  const sAt = o + 6 + el;
  const socket = b.latin1Slice(sAt, sAt + u16(b, o + 4 + el));
  const message = b.utf8Slice(sAt + socket.length, end);
  return [code, errno, message, socket];
}

/**
 * Hands out every event of `batch`. `own`: the payloads of its DATA_OWN events, in order — large
 * bodies arrive as Buffers of their own, which a body read whole can hand out without a copy.
 */
export function decodeBatch(
  batch: Buffer,
  own: Buffer[] | undefined,
  requests: RequestLookup,
  pools: Map<number, PoolSink>,
  bridges?: Map<number, BridgeSink>,
): void {
  const b = batch as Batch;
  // Kept and put back: a listener could make another batch be decoded inside this one.
  const outerMemory = batchMemory;
  const outerOffset = batchOffset;
  batchMemory = b.buffer;
  batchOffset = b.byteOffset;
  let next = 0;
  for (const f = frames(b); f.next(); ) {
    try {
      if (f.kind === DATA_OWN) {
        const chunk = own?.[next++];
        // Missing only if JS memory could not be had for it: fail the request, never lose bytes.
        if (chunk !== undefined) requests.get(f.id)?.onEngineData(chunk);
        else requests.get(f.id)?.onEngineError(ErrorCode.Internal, '', 'a response body chunk could not be handed to JavaScript', '');
        continue;
      }
      deliver(b, f.kind, f.id, f.start, f.end, requests, pools, bridges);
    } catch (err) {
      // A throwing listener (a 'disconnect' handler, say) must not cost other requests the rest
      // of the batch: they would wait forever. The error still surfaces, as an uncaught one.
      process.nextTick(() => {
        throw err;
      });
    }
  }
  batchMemory = outerMemory;
  batchOffset = outerOffset;
}

// The batch's memory, read once per batch: a body chunk is a view of it made with these, where
// subarray() would ask for `.buffer` (a call into V8's runtime) for every chunk.
let batchMemory: ArrayBufferLike = new ArrayBuffer(0);
let batchOffset = 0;

/** Hands one event to the request, pool or bridged socket it belongs to. */
function deliver(
  b: Batch,
  kind: number,
  id: number,
  start: number,
  end: number,
  requests: RequestLookup,
  pools: Map<number, PoolSink>,
  bridges?: Map<number, BridgeSink>,
): void {
  if (kind === DATA) {
    requests.get(id)?.onEngineData(Buffer.from(batchMemory, batchOffset + start, end - start));
  } else if (kind === WS_BINARY) {
    requests.get(id)?.onWsMessage?.(b.subarray(start, end));
  } else if (kind === WS_TEXT) {
    requests.get(id)?.onWsMessage?.(b.utf8Slice(start, end));
  } else if (kind === HEAD) {
    const sink = requests.get(id);
    if (sink === undefined) return;
    const headers: IncomingHeaders = {};
    const raw: string[] = [];
    const listEnd = readHead(b, start, headers, raw);
    const timings = end - listEnd >= HEAD_STAMPS ? headTimings(b, listEnd) : undefined;
    sink.onEngineHead(headStatus, headReason, headers, raw, timings);
  } else if (kind === END) {
    const sink = requests.get(id);
    if (sink === undefined) return;
    const trailers: IncomingHeaders = {};
    let raw = NO_TRAILERS;
    let after = start + 2;
    if (u16(b, start) > 0) {
      raw = [];
      after = readHeaders(b, start, trailers, raw);
    }
    sink.onEngineEnd(trailers, raw, end - after >= END_STAMP ? endStamp(b, after) : 0);
  } else if (kind === ERROR) {
    const sink = requests.get(id);
    if (sink === undefined) return;
    const [code, errno, message, socket] = readError(b, start, end);
    sink.onEngineError(code, errno, message, socket);
  } else if (kind === UPGRADE) {
    const sink = requests.get(id);
    if (sink === undefined) return;
    const headers: IncomingHeaders = {};
    const raw: string[] = [];
    const listEnd = readHead(b, start, headers, raw);
    const al = u16(b, listEnd);
    sink.onEngineUpgrade(headStatus, headReason, headers, raw, b.latin1Slice(listEnd + 2, listEnd + 2 + al));
  } else if (kind === BODY_DRAIN) {
    requests.get(id)?.onEngineBodyDrain(end - start >= 8 ? u32(b, start) + u32(b, start + 4) * 0x100000000 : 0);
  } else if (kind === RETRY) {
    requests.get(id)?.onEngineRetry();
  } else if (kind === CONNECTED) {
    pools.get(id)?.onEngineConnected(b.latin1Slice(start, end));
  } else if (kind === CONNECTING) {
    pools.get(id)?.onEngineConnecting?.();
  } else if (kind === SENT) {
    requests.get(id)?.onEngineSent?.(b.latin1Slice(start, end));
  } else if (kind === DISCONNECTED) {
    const [code, , message, socket] = readError(b, start, end);
    pools.get(id)?.onEngineDisconnected(code, message, socket);
  } else if (kind === CONNECT_FAILED) {
    const [code, errno, message, socket] = readError(b, start, end);
    pools.get(id)?.onEngineConnectFailed(code, errno, message, socket);
  } else if (kind === BRIDGE_WRITE) {
    bridges?.get(id)?.onBridgeWrite(b.subarray(start, end));
  } else if (kind === BRIDGE_OPEN) {
    pools.get(id)?.onEngineBridgeOpen?.(u32(b, start));
  } else if (kind === BRIDGE_DRAIN) {
    bridges?.get(id)?.onBridgeDrain();
  } else if (kind === BRIDGE_END) {
    bridges?.get(id)?.onBridgeEnd();
  } else if (kind === BRIDGE_CLOSE) {
    bridges?.get(id)?.onBridgeClose();
  } else if (kind === WS_PING) {
    requests.get(id)?.onWsPing?.(b.subarray(start, end));
  } else if (kind === WS_PONG) {
    requests.get(id)?.onWsPong?.(b.subarray(start, end));
  } else if (kind === WS_CLOSE) {
    requests.get(id)?.onWsClose?.(u16(b, start), b.utf8Slice(start + 2, end));
  } else if (kind === WS_FAIL) {
    requests.get(id)?.onWsFail?.(u16(b, start), b.utf8Slice(start + 2, end));
  }
}
