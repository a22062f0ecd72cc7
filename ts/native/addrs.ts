// The engine's description of a connection's endpoints: "localIp|localPort|remoteIp|remotePort"
// (fields empty for unix sockets), plus "|tls|<alpn>" on TLS connections (crates/engine/src/events.rs).

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
