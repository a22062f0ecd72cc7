// NO_PROXY: which request hosts bypass the proxy. A comma- or space-separated list; each entry is a
// host name, an IP address (IPv6 bracketed when it carries a port), `*` for every host, with an
// optional `:port`. A name matches itself and its subdomains; a leading `.` means the same, and a
// leading `*.` matches subdomains only. Trailing dots and case are ignored on both sides.

interface Entry {
  /** Lower-case, without a leading `.` / `*.` or a trailing dot; `*` for every host. */
  host: string;
  /** 0: any port. */
  port: number;
  /** `*.name`: subdomains, not the name itself. */
  subdomainsOnly: boolean;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

function bareHost(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.length > 1 && h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

function parseEntry(raw: string): Entry {
  let host = raw;
  let port = 0;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  if (bracketed !== null) {
    host = bracketed[1];
    port = bracketed[2] === undefined ? 0 : Number(bracketed[2]);
  } else {
    // One colon and digits after it: host:port. More colons: a bare IPv6 address.
    const withPort = /^([^:]+):(\d+)$/.exec(raw);
    if (withPort !== null) {
      host = withPort[1];
      port = Number(withPort[2]);
    }
  }
  const subdomainsOnly = host.startsWith('*.');
  if (subdomainsOnly) host = host.slice(2);
  else if (host.startsWith('.')) host = host.slice(1);
  return { host: bareHost(host), port, subdomainsOnly };
}

export class NoProxy {
  readonly #entries: Entry[];

  constructor(value: string) {
    this.#entries = value
      .split(/[,\s]+/)
      .filter((e) => e !== '')
      .map(parseEntry);
  }

  get empty(): boolean {
    return this.#entries.length === 0;
  }

  /** True when a request to `url`'s host and port must not go through the proxy. */
  bypasses(url: URL): boolean {
    const host = bareHost(url.hostname);
    const port = Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;
    for (const e of this.#entries) {
      if (e.port !== 0 && e.port !== port) continue;
      if (e.host === '*') return true;
      if (host === e.host && !e.subdomainsOnly) return true;
      if (host.endsWith(`.${e.host}`)) return true;
    }
    return false;
  }
}
