// The client side of a SOCKS5 handshake (RFC 1928, with RFC 1929 username/password) over a
// connected socket: method negotiation, optional authentication, then CONNECT to a host name (the
// proxy resolves it: remote DNS) or an IP literal. Resolves once the socket is a tunnel to the
// target; bytes that arrived past the reply are put back on the socket.
import { isIP, type Socket } from 'node:net';
import { InvalidArgumentError, Socks5ProxyError } from '../core/errors.js';

export interface Socks5Credentials {
  username: string;
  password: string;
}

const VERSION = 5;
const NO_AUTH = 0x00;
const USER_PASS = 0x02;
const NO_ACCEPTABLE = 0xff;

const REPLIES: Record<number, string> = {
  1: 'general SOCKS server failure',
  2: 'connection not allowed by ruleset',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
};

/** Reads exact byte counts from a socket in flowing order. */
class Reader {
  readonly #socket: Socket;
  #buffered = Buffer.alloc(0);
  #want: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  #failure: Error | null = null;
  readonly #onData = (chunk: Buffer): void => {
    this.#buffered = Buffer.concat([this.#buffered, chunk]);
    this.#serve();
  };
  readonly #onEnd = (): void => this.#fail(new Socks5ProxyError('the proxy closed the connection during the SOCKS5 handshake', 'UND_ERR_SOCKS5_CLOSED'));
  readonly #onError = (err: Error): void => this.#fail(err);

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('close', this.#onEnd);
    socket.on('error', this.#onError);
  }

  read(n: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#want = { n, resolve, reject };
      if (this.#failure !== null) reject(this.#failure);
      else this.#serve();
    });
  }

  #serve(): void {
    const w = this.#want;
    if (w === null || this.#buffered.length < w.n) return;
    this.#want = null;
    const out = this.#buffered.subarray(0, w.n);
    this.#buffered = this.#buffered.subarray(w.n);
    w.resolve(out);
  }

  #fail(err: Error): void {
    this.#failure ??= err;
    const w = this.#want;
    this.#want = null;
    w?.reject(this.#failure);
  }

  /** Stops listening; leftover bytes go back to the socket's readers. */
  release(): void {
    this.#socket.off('data', this.#onData);
    this.#socket.off('end', this.#onEnd);
    this.#socket.off('close', this.#onEnd);
    this.#socket.off('error', this.#onError);
    this.#socket.pause();
    if (this.#buffered.length > 0) this.#socket.unshift(this.#buffered);
  }
}

function lengthPrefixed(s: string, what: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  if (b.length > 255) throw new InvalidArgumentError(`SOCKS5 ${what} is longer than 255 bytes`);
  return Buffer.concat([Buffer.from([b.length]), b]);
}

function address(host: string): Buffer {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  const kind = isIP(h);
  if (kind === 4) return Buffer.from([0x01, ...h.split('.').map(Number)]);
  if (kind === 6) {
    const out = Buffer.alloc(17);
    out[0] = 0x04;
    // Expand "::" and write eight 16-bit groups.
    const [head, tail = ''] = h.split('::');
    const a = head === '' ? [] : head.split(':');
    const b = tail === '' ? [] : tail.split(':');
    const groups = h.includes('::') ? [...a, ...Array(8 - a.length - b.length).fill('0'), ...b] : a;
    groups.forEach((g: string, i: number) => out.writeUInt16BE(parseInt(g, 16), 1 + i * 2));
    return out;
  }
  return Buffer.concat([Buffer.from([0x03]), lengthPrefixed(h, 'host name')]);
}

/** Runs the handshake on a connected `socket`; resolves when it tunnels to `host:port`. */
export async function socks5Handshake(socket: Socket, host: string, port: number, credentials: Socks5Credentials | null): Promise<void> {
  const reader = new Reader(socket);
  try {
    const methods = credentials === null ? [NO_AUTH] : [NO_AUTH, USER_PASS];
    socket.write(Buffer.from([VERSION, methods.length, ...methods]));
    const [version, method] = await reader.read(2);
    if (version !== VERSION) throw new Socks5ProxyError(`Invalid SOCKS version: ${version}`, 'UND_ERR_SOCKS5_VERSION');
    if (method === NO_ACCEPTABLE) throw new Socks5ProxyError('No acceptable authentication method', 'UND_ERR_SOCKS5_AUTH_REJECTED');
    if (method === USER_PASS && credentials !== null) {
      socket.write(Buffer.concat([Buffer.from([1]), lengthPrefixed(credentials.username, 'username'), lengthPrefixed(credentials.password, 'password')]));
      const [, status] = await reader.read(2);
      // The message names no credential: errors may be logged.
      if (status !== 0) throw new Socks5ProxyError('Authentication failed', 'UND_ERR_SOCKS5_AUTH_FAILED');
    } else if (method !== NO_AUTH) {
      throw new Socks5ProxyError(`Unsupported authentication method: ${method}`, 'UND_ERR_SOCKS5_AUTH_METHOD');
    }
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16BE(port);
    socket.write(Buffer.concat([Buffer.from([VERSION, 0x01, 0x00]), address(host), portBytes]));
    const [rv, reply, , atyp] = await reader.read(4);
    if (rv !== VERSION) throw new Socks5ProxyError(`Invalid SOCKS version in reply: ${rv}`, 'UND_ERR_SOCKS5_REPLY_VERSION');
    if (reply !== 0) {
      throw new Socks5ProxyError(`SOCKS5 connection failed: ${REPLIES[reply] ?? `reply ${reply}`}`, `UND_ERR_SOCKS5_REPLY_${reply}`);
    }
    // The bound address (unused) and port.
    if (atyp === 0x01) await reader.read(4 + 2);
    else if (atyp === 0x04) await reader.read(16 + 2);
    else if (atyp === 0x03) await reader.read((await reader.read(1))[0] + 2);
    else throw new Socks5ProxyError(`Invalid address type in reply: ${atyp}`, 'UND_ERR_SOCKS5_ADDR_TYPE');
  } finally {
    reader.release();
  }
}
