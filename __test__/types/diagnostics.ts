// The diagnostics channel payloads under undici's names (DiagnosticsChannel.*): messages shaped as
// undici's are accepted, and ferro's own (engine socket addresses, no connector) too.
import { Socket } from 'node:net';
import type { DiagnosticsChannel } from 'ferro';
import type { DiagnosticsChannel as FromSubpath } from 'ferro/types/diagnostics-channel';

const request: DiagnosticsChannel.Request = { origin: 'http://a', completed: false, method: 'GET', path: '/', headers: ['host', 'a'] };
const connectParams: DiagnosticsChannel.ConnectParams = { host: 'a', hostname: 'a', protocol: 'http:', port: '', servername: null };
export const create: FromSubpath.RequestCreateMessage = { request };
export const chunk: DiagnosticsChannel.RequestBodyChunkSentMessage = { request, chunk: 'text' };
export const headers: DiagnosticsChannel.RequestHeadersMessage = { request, response: { statusCode: 200, statusText: 'OK', headers: [Buffer.from('a')] } };
export const connectedUndici: DiagnosticsChannel.ClientConnectedMessage = { socket: new Socket(), connectParams, connector: (_o, cb) => cb(null, new Socket()) };
export const connectedFerro: DiagnosticsChannel.ClientConnectedMessage = {
  socket: { localAddress: '127.0.0.1', localPort: 1, remoteAddress: '127.0.0.1', remotePort: 2, remoteFamily: 'IPv4', encrypted: false, alpnProtocol: false },
  connectParams: { ...connectParams, version: 'h1', localAddress: null },
  connector: null,
};

// @ts-expect-error a received chunk is a Buffer
export const badChunk: DiagnosticsChannel.RequestBodyChunkReceivedMessage = { request, chunk: 'text' };
// @ts-expect-error statusCode is a number
export const badStatus: DiagnosticsChannel.Response = { statusCode: '200', statusText: 'OK', headers: {} };
