// NODE_DEBUG output: `NODE_DEBUG=lib` (core), `fetch` (requests made by fetch) and `websocket`
// print lines `<FLAG> <pid>: <message>` on stderr. The lines are written by subscribers of the
// `lib:` diagnostics channels, subscribed here only when a flag is on: with no flag nothing
// subscribes, so requests publish nothing and pay nothing.
import dc from 'node:diagnostics_channel';
import { debuglog } from 'node:util';
import { kDebugScope, type ConnectParams, type DiagnosticsRequest } from './diagnostics.js';

export type DebugLogger = (message: string) => void;

/** The logger of one NODE_DEBUG flag, or null when the flag is off (Node's own flag matching). */
function logger(flag: string): DebugLogger | null {
  if (!debuglog(flag).enabled) return null;
  const prefix = flag.toUpperCase();
  return (message) => {
    process.stderr.write(`${prefix} ${process.pid}: ${message}\n`);
  };
}

/** LIB lines (null when off): connection and request lines below, and one-off notices from elsewhere. */
export const libDebug = logger('lib');
const lib = libDebug;
const fetch = logger('fetch');
/** WEBSOCKET lines (the WebSocket module prints its own through this; null when off). */
const websocketDebug = logger('websocket');

/** Request lines go to the flag of the API that made the request when that flag is on, else LIB. */
function requestLog(request: DiagnosticsRequest): DebugLogger | null {
  const scope = request[kDebugScope];
  if (scope === 'fetch' && fetch !== null) return fetch;
  if (scope === 'websocket' && websocketDebug !== null) return websocketDebug;
  return lib;
}

// Connection lines are not tied to one request. Under LIB they print as they happen. With only
// FETCH / WEBSOCKET on, a connection belongs to whichever API sends on it first: its lines wait
// (per origin, a few at most) until a request line decides, so a plain request() prints nothing
// under those flags.
const heldConnectionLines = new Map<string, string[]>();

function connectionLine(p: ConnectParams, message: string, opens: boolean): void {
  if (lib !== null) return lib(message);
  const key = `${p.protocol}//${p.host}`;
  const held = heldConnectionLines.get(key);
  if (opens || held === undefined) heldConnectionLines.set(key, [message]);
  else held.push(message);
}

function requestLine(request: DiagnosticsRequest, message: string): void {
  const log = requestLog(request);
  if (lib === null && heldConnectionLines.size > 0) {
    const held = heldConnectionLines.get(request.origin);
    if (held !== undefined) {
      heldConnectionLines.delete(request.origin);
      if (log !== null) for (const line of held) log(line);
    }
  }
  log?.(message);
}

const target = (request: DiagnosticsRequest): string => `${request.method} ${request.origin}${request.path}`;
const via = (p: ConnectParams): string => `${p.host} using ${p.protocol}${p.version ?? ''}`;

interface ConnectMessage {
  connectParams: ConnectParams;
  error?: Error;
}
interface RequestMessage {
  request: DiagnosticsRequest;
  response?: { statusCode: number };
  error?: Error;
}

function onRequest(name: string, line: (m: RequestMessage) => string): void {
  dc.subscribe(`lib:${name}`, (m) => {
    const msg = m as RequestMessage;
    requestLine(msg.request, line(msg));
  });
}

if (lib !== null || fetch !== null || websocketDebug !== null) {
  const onConnect = (name: string, line: (m: ConnectMessage) => string, opens = false): void => {
    dc.subscribe(`lib:${name}`, (m) => {
      const msg = m as ConnectMessage;
      connectionLine(msg.connectParams, line(msg), opens);
    });
  };
  onConnect('client:beforeConnect', (m) => `connecting to ${via(m.connectParams)}`, true);
  onConnect('client:connected', (m) => `connected to ${via(m.connectParams)}`);
  onConnect('client:connectError', (m) => `connection to ${via(m.connectParams)} errored - ${m.error?.message}`);
  onRequest('client:sendHeaders', (m) => `sending request to ${target(m.request)}`);
  onRequest('request:headers', (m) => `received response to ${target(m.request)} - HTTP ${m.response?.statusCode}`);
  onRequest('request:trailers', (m) => `trailers received from ${target(m.request)}`);
  onRequest('request:error', (m) => `request to ${target(m.request)} errored - ${m.error?.message}`);
}

if (websocketDebug !== null) {
  const log = websocketDebug;
  dc.subscribe('lib:websocket:open', (m) => {
    const address = (m as { address?: { address: string; port?: number } | null }).address;
    if (address == null) log('connection opened');
    else log(`connection opened ${address.address}${address.port ? `:${address.port}` : ''}`);
  });
  dc.subscribe('lib:websocket:close', (m) => {
    const { websocket, code, reason } = m as { websocket: { url: string }; code: number; reason: string };
    log(`closed connection to ${websocket.url} - ${code} ${reason}`);
  });
  dc.subscribe('lib:websocket:socket_error', (err) => log(`connection errored - ${(err as Error).message}`));
  dc.subscribe('lib:websocket:ping', () => log('ping received'));
  dc.subscribe('lib:websocket:pong', () => log('pong received'));
}
