// The engine's description of a connection's endpoints: "localIp|localPort|remoteIp|remotePort"
// (fields empty for unix sockets), plus "|tls|<alpn>" on TLS connections (crates/engine/src/events.rs).
import type { SocketInfo } from '../core/errors.js';

/** The socket members people read, as Node's sockets name them. */
export interface SocketAddresses {
  localAddress: string | undefined;
  localPort: number | undefined;
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  remoteFamily: string | undefined;
  encrypted: boolean;
  alpnProtocol: string | false;
}

export function parseAddrs(addrs: string): SocketAddresses {
  const [la, lp, ra, rp, tls, alpn] = addrs.split('|');
  const encrypted = tls === 'tls';
  return {
    localAddress: la || undefined,
    localPort: lp ? Number(lp) : undefined,
    remoteAddress: ra || undefined,
    remotePort: rp ? Number(rp) : undefined,
    remoteFamily: !ra ? undefined : ra.includes(':') ? 'IPv6' : 'IPv4',
    encrypted,
    alpnProtocol: encrypted && alpn ? alpn : false,
  };
}

/**
 * An error record's socket field, "bytesWritten|bytesRead|<addresses>", as undici's
 * `SocketError.socket` (its util.getSocketInfo); null when the error named no connection.
 */
export function parseSocketInfo(info: string): SocketInfo | null {
  if (info === '') return null;
  const cut = info.indexOf('|', info.indexOf('|') + 1);
  const a = parseAddrs(info.slice(cut + 1));
  return {
    localAddress: a.localAddress,
    localPort: a.localPort,
    remoteAddress: a.remoteAddress,
    remotePort: a.remotePort,
    remoteFamily: a.remoteFamily,
    // Node's socket.timeout, which undici never sets: the engine's timers are its own.
    timeout: undefined,
    bytesWritten: Number(info.slice(0, info.indexOf('|'))),
    bytesRead: Number(info.slice(info.indexOf('|') + 1, cut)),
  };
}
