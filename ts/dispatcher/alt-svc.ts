// Alt-Svc (RFC 7838) for `allowH3` dispatchers: an HTTPS response's `Alt-Svc` header names where
// the origin also speaks HTTP/3 (`h3=":443"; ma=3600`, `h3="alt.example:8443"`, `clear`). Each
// engine dispatcher keeps its own entry (never process-wide) in its engine pool, whose next
// connections then try QUIC there while the entry is fresh (crates/engine/src/h3/route.rs).

/** An advertised HTTP/3 endpoint: `host` empty for the origin's own; `maxAge` in seconds. */
export interface AltSvcEntry {
  host: string;
  port: number;
  maxAge: number;
}

/** RFC 7838 §3.1: `ma` defaults to 24 hours. */
const DEFAULT_MAX_AGE = 86400;

/**
 * The first `h3` alternative in an Alt-Svc field value; `'clear'` for `clear`; null when it names
 * none (other protocols, draft versions such as `h3-29`, or a value that does not parse).
 */
export function parseAltSvc(value: string): AltSvcEntry | 'clear' | null {
  const v = value.trim();
  if (v === 'clear') return 'clear';
  for (const alt of splitOutsideQuotes(v, ',')) {
    const [first, ...params] = splitOutsideQuotes(alt, ';');
    const eq = first!.indexOf('=');
    if (eq < 0 || first!.slice(0, eq).trim() !== 'h3') continue;
    const authority = unquote(first!.slice(eq + 1).trim());
    const endpoint = authority === null ? null : parseAuthority(authority);
    if (endpoint === null) continue;
    let maxAge = DEFAULT_MAX_AGE;
    for (const p of params) {
      const [name, raw] = p.split('=', 2).map((s) => s.trim());
      if (name !== 'ma' || raw === undefined) continue;
      const n = Number(unquote(raw) ?? raw);
      if (Number.isInteger(n) && n >= 0) maxAge = n;
    }
    return { ...endpoint, maxAge };
  }
  return null;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === sep && !quoted) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

function unquote(s: string): string | null {
  if (s.length < 2 || !s.startsWith('"') || !s.endsWith('"')) return null;
  return s.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** `":443"`, `"host:443"` or `"[::1]:443"` (RFC 7838 §3: uri-host ":" port). */
function parseAuthority(a: string): { host: string; port: number } | null {
  const colon = a.lastIndexOf(':');
  if (colon < 0) return null;
  const host = a.slice(0, colon);
  const portText = a.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return null;
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  if (host.startsWith('[') !== host.endsWith(']')) return null;
  if (/[\s/?#@]/.test(host)) return null;
  return { host, port };
}

/** What an engine pool takes: `maxAgeMs` 0 clears its entry. */
type AltSvcSink = (host: string, port: number, maxAgeMs: number) => void;

/** One dispatcher's Alt-Svc cache: it tells its engine pool what each HTTPS response advertised. */
export class AltSvcCache {
  readonly #sink: AltSvcSink;
  /** The last value seen and when it was handed on (a repeated value within a second is not). */
  #last = '';
  #at = 0;

  constructor(sink: AltSvcSink) {
    this.#sink = sink;
  }

  /** An HTTPS response's `alt-svc` header (absent: nothing changes, RFC 7838 §3). */
  learn(value: string | string[] | undefined): void {
    if (value === undefined) return;
    const v = Array.isArray(value) ? value.join(', ') : value;
    const now = Date.now();
    if (v === this.#last && now - this.#at < 1000) return;
    this.#last = v;
    this.#at = now;
    const entry = parseAltSvc(v);
    if (entry === null) return;
    if (entry === 'clear') return this.#sink('', 0, 0);
    this.#sink(entry.host, entry.port, entry.maxAge * 1000);
  }
}
