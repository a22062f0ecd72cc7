// The engine's WebSocket codec (src/websocket.rs) as JS sees it, and the decoder of the packed
// events its `feed` returns.
import { binding } from '../native/binding.js';

/**
 * Frames are queued in the codec (`text`, `binary`, `ping`, `close` return false once a close went
 * out) and taken together with `takeFrames`: one socket write for all a tick produced.
 */
export interface NativeWebSocket {
  /** Packed events (null: none). */
  feed(chunk: Buffer): Buffer | null;
  text(data: string): boolean;
  binary(data: Uint8Array): boolean;
  ping(pong: boolean, data: Uint8Array): boolean;
  close(code: number, reason: string): boolean;
  takeFrames(): Buffer | null;
  readonly closedCleanly: boolean;
}

interface WebSocketBinding {
  NativeWebSocket: new (extensions: string, maxPayloadSize: number, maxFragments: number) => NativeWebSocket;
  websocketExtensionOffer(): string;
}

const native = binding as unknown as WebSocketBinding;

/**
 * The codec for a connection whose server answered `extensions`; throws if they are unacceptable.
 * Limits of 0 are off.
 */
export function createCodec(extensions: string, maxPayloadSize: number, maxFragments: number): NativeWebSocket {
  return new native.NativeWebSocket(extensions, maxPayloadSize, maxFragments);
}

/** The `Sec-WebSocket-Extensions` offer (permessage-deflate, as browsers send it). */
export const extensionOffer: string = native.websocketExtensionOffer();

/** Where decoded events go, in the order the server sent them. */
export interface CodecSink {
  onMessage(data: string | Buffer): void;
  onPing(data: Buffer): void;
  onPong(data: Buffer): void;
  /** The server's close frame; `code` 1005 when it carried none. */
  onCloseFrame(code: number, reason: string): void;
  /** The codec queued frames of its own (pong replies, close frames): `takeFrames` has them. */
  onWrite(): void;
  /** We failed the connection with close `code` (a close frame with it went out). */
  onFail(code: number, reason: string): void;
}

const TEXT = 1;
const BINARY = 2;
const PING = 3;
const PONG = 4;
const CLOSE = 5;
const WRITE = 6;
const FAIL = 7;
const STOP = 8;

/**
 * Routes one `feed` result (`kind u8 | length u32 LE | payload`…) to `sink`. Returns -1 when the
 * codec took the whole chunk, else how many bytes of it (its replies reached their budget: send
 * them, then feed the rest).
 */
export function decodeEvents(batch: Buffer, sink: CodecSink): number {
  let took = -1;
  let o = 0;
  while (o < batch.length) {
    const kind = batch[o]!;
    const len = batch.readUInt32LE(o + 1);
    const start = o + 5;
    const end = start + len;
    o = end;
    switch (kind) {
      case TEXT:
        sink.onMessage(batch.toString('utf8', start, end));
        break;
      case BINARY:
        sink.onMessage(batch.subarray(start, end));
        break;
      case PING:
        sink.onPing(batch.subarray(start, end));
        break;
      case PONG:
        sink.onPong(batch.subarray(start, end));
        break;
      case CLOSE: {
        const code = batch.readUInt16LE(start);
        sink.onCloseFrame(code === 0 ? 1005 : code, batch.toString('utf8', start + 2, end));
        break;
      }
      case WRITE:
        sink.onWrite();
        break;
      case FAIL:
        sink.onFail(batch.readUInt16LE(start), batch.toString('utf8', start + 2, end));
        break;
      case STOP:
        took = batch.readUInt32LE(start);
        break;
    }
  }
  return took;
}
