// The payloads of the diagnostics channels (`lib:*`, and `undici:*` with publishUndiciChannels()),
// under undici's type names (`DiagnosticsChannel.RequestCreateMessage`, …). Where ferro publishes
// something other than undici, the type says both: subscribers written for undici still compile.
import type { Socket } from 'node:net';
import type { ConnectFunction } from './connector.js';
import type { HttpMethod, IncomingHeaders } from './types.js';
import type { SocketAddresses } from '../native/addrs.js';

export declare namespace DiagnosticsChannel {
  interface Request {
    origin?: string | URL;
    completed: boolean;
    method?: HttpMethod;
    path: string;
    /** ferro: the flat `[name, value, …]` list; undici's h1 client: the header block as a string. */
    headers: string[] | string;
  }
  interface Response {
    statusCode: number;
    statusText: string;
    /** The raw `[name, value, …]` Buffers (h1), or the header object (h2 over TLS). */
    headers: Buffer[] | IncomingHeaders;
  }
  interface ConnectParams {
    host: string;
    hostname: string;
    protocol: string;
    port: string;
    servername: string | null;
    /** Set by ferro: 'h1' or 'h2'. */
    version?: string;
    /** Set by ferro (null). */
    localAddress?: string | null;
  }
  /** The engine's own sockets report their addresses; undici gives its net.Socket. */
  type ClientSocket = SocketAddresses | Socket;
  interface RequestCreateMessage {
    request: Request;
  }
  interface RequestBodySentMessage {
    request: Request;
  }
  interface RequestBodyChunkSentMessage {
    request: Request;
    chunk: Uint8Array | string;
  }
  interface RequestBodyChunkReceivedMessage {
    request: Request;
    chunk: Buffer;
  }
  interface RequestHeadersMessage {
    request: Request;
    response: Response;
  }
  interface RequestTrailersMessage {
    request: Request;
    trailers: Buffer[];
  }
  interface RequestErrorMessage {
    request: Request;
    error: Error;
  }
  interface ClientSendHeadersMessage {
    request: Request;
    headers: string;
    socket: ClientSocket;
  }
  interface ClientBeforeConnectMessage {
    connectParams: ConnectParams;
    /** null when the engine makes the connection (ferro's native path). */
    connector: ConnectFunction | null;
  }
  interface ClientConnectedMessage {
    socket: ClientSocket;
    connectParams: ConnectParams;
    connector: ConnectFunction | null;
  }
  interface ClientConnectErrorMessage {
    error: Error;
    /** Not set by ferro: no socket was made available. */
    socket?: ClientSocket;
    connectParams: ConnectParams;
    connector: ConnectFunction | null;
  }
}
