// WebSocketStream's and the WebSocket events' declarations as undici's test/types/websocket.test-d.ts
// checks them: the opened streams are node:stream/web's ReadableStream / WritableStream exactly
// (tsd's expectType is an identity check, as `Same` is here), ErrorEvent.error an Error.
import type { ReadableStream, WritableStream } from 'node:stream/web';
import { WebSocketError, WebSocketStream, type ErrorEvent, type WebSocketCloseInfo } from 'ferro';

/** true only when A and B are the same type (not merely assignable either way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

declare const webSocketStream: WebSocketStream;
declare const errorEvent: ErrorEvent;

export async function opened(): Promise<void> {
  const info = await webSocketStream.opened;
  const readable: Same<typeof info.readable, ReadableStream> = true;
  const writable: Same<typeof info.writable, WritableStream> = true;
  const extensions: string = info.extensions;
  void [readable, writable, extensions];
}

export const error: Same<typeof errorEvent.error, Error> = true;
// `closed` gives both members; close() and WebSocketError take any part of them.
export const closed: Promise<WebSocketCloseInfo> = webSocketStream.closed;
export const closeInfo: Same<WebSocketCloseInfo, { closeCode: number; reason: string }> = true;
webSocketStream.close();
webSocketStream.close({ reason: 'bye' });
export const made: WebSocketStream = new WebSocketStream('ws://localhost', { protocols: ['chat'], signal: new AbortController().signal });
export const wsError: WebSocketError = new WebSocketError('gone', { closeCode: 1000 });
// @ts-expect-error a stream's URL is a string or URL
new WebSocketStream(42);
