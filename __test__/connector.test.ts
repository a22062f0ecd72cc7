// Connectors: buildConnector on its own (net and tls sockets, sessions, timeouts, httpSocket), a
// Client's `connect` option (buildConnector as is → the native path; any other function, or
// options only Node honours → Node sockets over the bridged transport), and one set of request
// tests run against both paths.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import netCjs from 'node:net';
import tlsCjs from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, type Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { Client, Pool, errors } from '../ts/index.js';
import { buildConnector } from '../ts/core/connector.js';
import { BodyProgress, backpressuredBody, serverStaysBlocked } from './fixtures/servers.js';
import type { DispatchController, DispatchHandler } from '../ts/core/types.js';

const dir = join(import.meta.dirname, 'fixtures', 'tls');
const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
const ca = read('ca.pem');
const serverCert = { key: read('localhost.key'), cert: read('localhost.pem') };

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
function track<T extends { close(): unknown }>(x: T): T {
  cleanup.push(() => x.close());
  return x;
}

// Node sockets made while a test runs: native connections make none.
const made = { net: 0, tls: 0 };
{
  const netConnect = netCjs.connect;
  const tlsConnect = tlsCjs.connect;
  netCjs.connect = ((...args: Parameters<typeof netConnect>) => (made.net++, netConnect(...args))) as typeof netConnect;
  tlsCjs.connect = ((...args: Parameters<typeof tlsConnect>) => (made.tls++, tlsConnect(...args))) as typeof tlsConnect;
  // Makes `import * as net` / `* as tls` (as ts/core/connector.ts does) see the wrappers.
  syncBuiltinESMExports();
}
afterEach(() => {
  made.net = 0;
  made.tls = 0;
});

interface TestServer {
  origin: string;
  port: number;
  server: http.Server;
  /** Connections accepted (TLS: handshakes completed), with whether the TLS session was resumed. */
  conns: { reused: boolean; cipher?: string }[];
  close(): Promise<void>;
}

async function serve(secure: boolean, handler: http.RequestListener, opts: https.ServerOptions = {}): Promise<TestServer> {
  const server = secure ? https.createServer({ ...serverCert, ...opts }, handler) : http.createServer(handler);
  const conns: TestServer['conns'] = [];
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    if (!secure) conns.push({ reused: false });
  });
  server.on('secureConnection', (s: TLSSocket) => conns.push({ reused: s.isSessionReused(), cipher: s.getCipher().name }));
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return track({
    origin: `${secure ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    server,
    conns,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function client(origin: string, opts: ConstructorParameters<typeof Client>[1] = {}): Client {
  return track(new Client(origin, opts));
}

async function text(c: Client | Pool, path = '/'): Promise<string> {
  const { statusCode, body } = await c.request({ path, method: 'GET' });
  expect(statusCode).toBe(200);
  return body.text();
}

/** Connects with `connector` and resolves with the socket, or rejects with its error. */
function connectWith(
  connector: ReturnType<typeof buildConnector>,
  opts: Parameters<ReturnType<typeof buildConnector>>[0],
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    connector(opts, (err, socket) => {
      if (err) reject(err);
      else {
        cleanup.push(() => socket!.destroy());
        resolve(socket!);
      }
    });
  });
}

/** One HTTP/1.1 exchange written by hand over a connected socket; resolves with what came back. */
async function rawGet(socket: Socket, path = '/'): Promise<string> {
  socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  let out = '';
  for await (const chunk of socket) out += chunk;
  return out;
}

const hello: http.RequestListener = (req, res) => res.end(`hello ${req.url}`);

describe('buildConnector on its own', () => {
  it('makes net sockets for http:', async () => {
    const s = await serve(false, hello);
    const socket = await connectWith(buildConnector({}), { hostname: '127.0.0.1', host: `127.0.0.1:${s.port}`, protocol: 'http:', port: String(s.port) });
    expect(socket.remotePort).toBe(s.port);
    expect(await rawGet(socket, '/net')).toMatch(/^HTTP\/1.1 200 OK[\s\S]*hello \/net$/);
    expect(made.net).toBe(1);
  });

  it('makes tls sockets for https:, verified against `ca`, offering http/1.1', async () => {
    const s = await serve(true, hello);
    const socket = (await connectWith(buildConnector({ ca }), {
      hostname: 'localhost',
      host: `localhost:${s.port}`,
      protocol: 'https:',
      port: String(s.port),
    })) as TLSSocket;
    expect(socket.authorized).toBe(true);
    expect(socket.alpnProtocol).toBe('http/1.1');
    expect((socket as unknown as { servername: string }).servername).toBe('localhost');
    expect(await rawGet(socket, '/tls')).toContain('hello /tls');
  });

  it('fails with the TLS error when the chain is not trusted', async () => {
    const s = await serve(true, hello);
    const err = await connectWith(buildConnector({}), { hostname: '127.0.0.1', protocol: 'https:', port: String(s.port) }).catch((e) => e);
    expect(err).toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  it('fails with the connect error (ECONNREFUSED)', async () => {
    const s = await serve(false, hello);
    await s.close();
    const err = await connectWith(buildConnector({}), { hostname: '127.0.0.1', protocol: 'http:', port: String(s.port) }).catch((e) => e);
    expect(err).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('resumes TLS sessions, unless maxCachedSessions is 0', async () => {
    const s = await serve(true, hello);
    const target = { hostname: 'localhost', host: `localhost:${s.port}`, protocol: 'https:', port: String(s.port) };
    for (const [opts, reused] of [
      [{ ca }, true],
      [{ ca, maxCachedSessions: 0 }, false],
    ] as const) {
      const connector = buildConnector(opts);
      // TLS 1.3 tickets arrive after the handshake: finish an exchange before the next connect.
      await rawGet(await connectWith(connector, target));
      await rawGet(await connectWith(connector, target));
      expect(s.conns.splice(0).map((c) => c.reused)).toEqual([false, reused]);
    }
  });

  it('times out with ConnectTimeoutError when the handshake never completes', async () => {
    // Accepts TCP but never speaks TLS.
    const silent = netCjs.createServer((sock) => cleanup.push(() => sock.destroy()));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    track({ close: () => new Promise<void>((r) => silent.close(() => r())) });
    const { port } = silent.address() as AddressInfo;
    const started = Date.now();
    const err = await connectWith(buildConnector({ timeout: 150 }), { hostname: '127.0.0.1', protocol: 'https:', port: String(port) }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(errors.ConnectTimeoutError);
    expect(err.code).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(err.message).toBe(`Connect Timeout Error (attempted address: 127.0.0.1:${port}, timeout: 150ms)`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('connects over a unix socket (socketPath)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ferro-conn-')), 's.sock');
    const server = http.createServer(hello);
    server.listen(path);
    await once(server, 'listening');
    track({ close: () => new Promise<void>((r) => server.close(() => r())) });
    const socket = await connectWith(buildConnector({ socketPath: path }), { hostname: 'localhost', protocol: 'http:', port: '' });
    expect(await rawGet(socket, '/unix')).toContain('hello /unix');
  });

  it('binds localAddress', async () => {
    const s = await serve(false, hello);
    const socket = await connectWith(buildConnector({}), { hostname: '127.0.0.1', protocol: 'http:', port: String(s.port), localAddress: '127.0.0.1' });
    expect(socket.localAddress).toBe('127.0.0.1');
  });

  it('allowH2 / preferH2 set the ALPN offer', async () => {
    const seen: string[][] = [];
    const s = await serve(true, hello, { ALPNCallback: ({ protocols }) => (seen.push(protocols), 'http/1.1') });
    const target = { hostname: '127.0.0.1', protocol: 'https:', port: String(s.port) };
    await connectWith(buildConnector({ ca, allowH2: true }), target);
    await connectWith(buildConnector({ ca, allowH2: true, preferH2: true }), target);
    expect(seen).toEqual([
      ['http/1.1', 'h2'],
      ['h2', 'http/1.1'],
    ]);
  });

  it('httpSocket: TLS over an existing socket', async () => {
    const s = await serve(true, hello);
    const raw = await connectWith(buildConnector({}), { hostname: '127.0.0.1', protocol: 'http:', port: String(s.port) });
    const secured = (await connectWith(buildConnector({ ca }), {
      hostname: 'localhost',
      protocol: 'https:',
      port: String(s.port),
      httpSocket: raw,
    })) as TLSSocket;
    expect(secured.encrypted).toBe(true);
    expect(await rawGet(secured, '/over')).toContain('hello /over');
    // Only the plain socket was dialed.
    expect(made.net).toBe(1);
  });

  it('validates its options', () => {
    expect(() => buildConnector({ maxCachedSessions: -1 })).toThrow(errors.InvalidArgumentError);
    expect(() => buildConnector({ maxCachedSessions: 1.5 })).toThrow(errors.InvalidArgumentError);
    expect(() => buildConnector({ timeout: -1 })).toThrow(errors.InvalidArgumentError);
    expect(() => buildConnector(null as never)).toThrow(errors.InvalidArgumentError);
    const c = buildConnector({});
    expect(() => c({ hostname: 'x', protocol: 'http:', port: '1', httpSocket: new netCjs.Socket() }, () => {})).toThrow(
      errors.InvalidArgumentError,
    );
  });
});

describe('a Client with a connector', () => {
  it('buildConnector given as is takes the native path with its options', async () => {
    const s = await serve(true, hello);
    const c = client(`https://localhost:${s.port}`, { connect: buildConnector({ ca, maxCachedSessions: 0 }) });
    expect(await text(c, '/a')).toBe('hello /a');
    await c.request({ path: '/', method: 'GET', reset: true }).then((r) => r.body.text());
    expect(await text(c, '/b')).toBe('hello /b');
    expect(made).toEqual({ net: 0, tls: 0 });
    // Its options apply: no session cache.
    expect(s.conns.map((x) => x.reused)).toEqual([false, false]);
  });

  it('connect options given as an object take the native path', async () => {
    const s = await serve(true, hello);
    expect(await text(client(s.origin, { connect: { ca } }))).toBe('hello /');
    expect(made).toEqual({ net: 0, tls: 0 });
  });

  it('a wrapper checking the certificate fingerprint: accepted → requests run over its socket', async () => {
    const s = await serve(true, hello);
    const expected = new X509Certificate(serverCert.cert).fingerprint256;
    const inner = buildConnector({ ca });
    const seen: string[] = [];
    const c = client(s.origin, {
      connect: (opts, cb) =>
        inner(opts, (err, socket) => {
          if (err) return cb(err, null);
          const fp = (socket as TLSSocket).getPeerCertificate().fingerprint256;
          seen.push(fp);
          if (fp !== expected) {
            socket!.destroy();
            return cb(new Error('certificate fingerprint mismatch'), null);
          }
          cb(null, socket);
        }),
    });
    const connected = once(c, 'connect');
    expect(await text(c, '/1')).toBe('hello /1');
    expect(await text(c, '/2')).toBe('hello /2');
    await connected;
    expect(seen).toEqual([expected]);
    expect(made.tls).toBe(1);
  });

  it('a wrapper that rejects: the request fails with its error, and connectionError fires with it', async () => {
    const s = await serve(true, hello);
    const inner = buildConnector({ ca });
    const refusal = new Error('certificate fingerprint mismatch');
    let destroyed: Socket | null | undefined = null;
    const c = client(s.origin, {
      connect: (opts, cb) =>
        inner(opts, (err, socket) => {
          if (err) return cb(err, null);
          socket!.destroy();
          destroyed = socket!;
          cb(refusal, null);
        }),
    });
    const failed = once(c, 'connectionError');
    const err = await c.request({ path: '/', method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBe(refusal);
    const [origin, targets, reported] = await failed;
    expect(String(origin)).toBe(`${s.origin}/`);
    expect(targets).toEqual([c]);
    expect(reported).toBe(refusal);
    expect(destroyed!.destroyed).toBe(true);
    // The next request tries again (and fails the same way).
    await expect(c.request({ path: '/', method: 'GET' })).rejects.toBe(refusal);
  });

  it('a connect function that throws fails the request with what it threw', async () => {
    const s = await serve(false, hello);
    const boom = new TypeError('no sockets today');
    const c = client(s.origin, {
      connect: () => {
        throw boom;
      },
    });
    await expect(c.request({ path: '/', method: 'GET' })).rejects.toBe(boom);
  });

  it("a connector's own errors reach the request (ECONNREFUSED from Node)", async () => {
    const s = await serve(false, hello);
    await s.close();
    const inner = buildConnector({});
    const c = client(s.origin, { connect: (o, cb) => inner(o, cb) });
    await expect(c.request({ path: '/', method: 'GET' })).rejects.toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect' });
  });

  it('a connect function that never calls back → ConnectTimeoutError after connectTimeout', async () => {
    const s = await serve(false, hello);
    let late: ((err: Error | null, socket: Socket | null) => void) | null = null;
    const c = client(s.origin, { connectTimeout: 100, connect: (_o, cb) => void (late = cb) });
    const failed = once(c, 'connectionError');
    const started = Date.now();
    await expect(c.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.ConnectTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect((await failed)[2]).toBeInstanceOf(errors.ConnectTimeoutError);
    // A socket handed over after the timeout is destroyed, not leaked.
    const sock = netCjs.connect(s.port, '127.0.0.1');
    await once(sock, 'connect');
    late!(null, sock);
    expect(sock.destroyed).toBe(true);
  });

  it('the connector gets hostname, host, protocol, port, servername and localAddress', async () => {
    const s = await serve(false, hello);
    const inner = buildConnector({});
    const calls: unknown[] = [];
    const c = client(`http://localhost:${s.port}`, {
      localAddress: '127.0.0.1',
      connect: (o, cb) => {
        calls.push({ ...o });
        inner({ ...o, hostname: '127.0.0.1' }, cb);
      },
    });
    expect(await text(c)).toBe('hello /');
    // undici passes the TLS name whatever the protocol (none for an IP literal).
    expect(calls).toEqual([
      { hostname: 'localhost', host: `localhost:${s.port}`, protocol: 'http:', port: String(s.port), servername: 'localhost', localAddress: '127.0.0.1' },
    ]);
  });

  it('httpSocket: a connector securing a socket it dialed itself', async () => {
    const s = await serve(true, hello);
    const plain = buildConnector({});
    const secure = buildConnector({ ca });
    const c = client(s.origin, {
      connect: (o, cb) =>
        plain({ ...o, protocol: 'http:' }, (err, raw) => (err ? cb(err, null) : secure({ ...o, httpSocket: raw! }, cb))),
    });
    expect(await text(c, '/wrapped')).toBe('hello /wrapped');
    expect(s.conns.length).toBe(1);
  });

  it('a socket that ends under a request fails it like a native one', async () => {
    const s = await serve(false, (req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const inner = buildConnector({});
    const c = client(s.origin, { connect: (o, cb) => inner(o, cb) });
    const { body } = await c.request({ path: '/', method: 'GET' });
    // A keep-alive response cut short: the peer went away (undici's SocketError).
    await expect(body.text()).rejects.toMatchObject({
      constructor: errors.SocketError,
      code: 'UND_ERR_SOCKET',
      message: 'other side closed',
    });
  });
});

describe('options only Node honours move a client to Node sockets', () => {
  it('ciphers: Node TLS, with that cipher', async () => {
    const s = await serve(true, hello);
    const cipher = 'ECDHE-ECDSA-AES128-GCM-SHA256';
    const c = client(s.origin, { connect: { ca, ciphers: cipher, maxVersion: 'TLSv1.2' } });
    expect(await text(c, '/c')).toBe('hello /c');
    expect(await text(c, '/d')).toBe('hello /d');
    expect(made.tls).toBe(1);
    expect(s.conns).toEqual([{ reused: false, cipher }]);
  });

  it('checkServerIdentity is called (and its verdict stands)', async () => {
    const s = await serve(true, hello);
    const names: string[] = [];
    const ok = client(`https://localhost:${s.port}`, {
      connect: { ca, checkServerIdentity: (name: string, cert: unknown) => (names.push(name), tlsCjs.checkServerIdentity(name, cert as never)) },
    });
    expect(await text(ok)).toBe('hello /');
    expect(names).toEqual(['localhost']);
    const refusal = new Error('pinned elsewhere');
    const bad = client(s.origin, { connect: { ca, checkServerIdentity: () => refusal } });
    await expect(bad.request({ path: '/', method: 'GET' })).rejects.toBe(refusal);
  });

  it('tls options given through the `tls` client option count too; sessions resume', async () => {
    const s = await serve(true, hello);
    const c = client(s.origin, { tls: { ca, ecdhCurve: 'auto' } });
    await c.request({ path: '/', method: 'GET', reset: true }).then((r) => r.body.text());
    expect(await text(c)).toBe('hello /');
    expect(s.conns.map((x) => x.reused)).toEqual([false, true]);
    expect(made.tls).toBe(2);
  });

  it('localAddress (client option or connect option), for http too', async () => {
    const s = await serve(false, (req, res) => res.end(req.socket.remoteAddress));
    expect(await text(client(s.origin, { localAddress: '127.0.0.1' }))).toBe('127.0.0.1');
    expect(await text(client(s.origin, { connect: { localAddress: '127.0.0.1' } }))).toBe('127.0.0.1');
    expect(made.net).toBe(2);
  });

  it('TLS options are irrelevant to http origins: native', async () => {
    const s = await serve(false, hello);
    expect(await text(client(s.origin, { connect: { ciphers: 'x' } as never }))).toBe('hello /');
    expect(made).toEqual({ net: 0, tls: 0 });
  });

  it('a buildConnector result with such options is used as the connector', async () => {
    const s = await serve(true, hello);
    const c = client(s.origin, { connect: buildConnector({ ca, ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384', maxVersion: 'TLSv1.2' }) });
    expect(await text(c)).toBe('hello /');
    expect(s.conns[0]!.cipher).toBe('ECDHE-ECDSA-AES256-GCM-SHA384');
  });

  it('a server choosing h2 but answering in HTTP/1.1 fails cleanly on Node TLS too', async () => {
    const s = await serve(true, hello, { ALPNProtocols: ['h2'] });
    const c = client(s.origin, { allowH2: true, connect: { ca, ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' } });
    await expect(c.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(errors.SocketError);
  });

  it('an invalid connect option is an InvalidArgumentError', () => {
    expect(() => new Client('http://127.0.0.1:1', { connect: 42 as never })).toThrow(errors.InvalidArgumentError);
  });
});

// ------------------------------------------------------------------------------------------------
// The same request tests over the native path and the bridged one.

type Opts = ConstructorParameters<typeof Client>[1];
// Any function that is not buildConnector's own result makes the client bridged.
const wrap =
  (c: ReturnType<typeof buildConnector>): NonNullable<Opts>['connect'] =>
  (o, cb) =>
    c(o, cb);

const paths: { name: string; secure: boolean; bridged: boolean; opts: () => Opts }[] = [
  { name: 'native http', secure: false, bridged: false, opts: () => ({}) },
  { name: 'bridged http', secure: false, bridged: true, opts: () => ({ connect: wrap(buildConnector({})) }) },
  { name: 'native https', secure: true, bridged: false, opts: () => ({ connect: { ca } }) },
  { name: 'bridged https', secure: true, bridged: true, opts: () => ({ connect: wrap(buildConnector({ ca })) }) },
];

// Far beyond what socket buffers and the engine's queue bound can absorb past a pause.
const BIG = 64 << 20;

function routes(progress = new BodyProgress()): http.RequestListener {
  const big = backpressuredBody(BIG, 'z', progress);
  return async (req, res) => {
    const url = req.url ?? '/';
    if (url === '/echo') {
      const body = await readBody(req);
      res.writeHead(200, { 'content-length': body.length, 'x-method': req.method });
      res.end(body);
    } else if (url === '/chunked') {
      res.writeHead(200, { Trailer: 'X-Checksum' });
      res.write('chunk one, ');
      setTimeout(() => {
        res.write('chunk two');
        res.addTrailers({ 'X-Checksum': 'abc123' });
        res.end();
      }, 10);
    } else if (url === '/big') {
      big(req, res);
    } else if (url === '/hang') {
      res.writeHead(200, { 'content-length': 1000 });
      res.write('start');
    } else {
      res.end(`hello ${url}`);
    }
  };
}

describe.each(paths)('requests over the $name path', ({ secure, bridged, opts }) => {
  async function setup(extra: Opts = {}): Promise<[TestServer, Client]> {
    const s = await serve(secure, routes());
    s.server.on('upgrade', (req, socket: Duplex, head) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n');
      if (head.length) socket.write(head);
      socket.pipe(socket);
    });
    return [s, client(s.origin, { ...opts(), ...extra })];
  }

  afterEach(() => {
    // Each path is what it claims to be.
    if (bridged) expect(made.net + made.tls).toBeGreaterThan(0);
    else expect(made).toEqual({ net: 0, tls: 0 });
  });

  it('GET, keeping the connection alive across requests', async () => {
    const [s, c] = await setup();
    for (let i = 0; i < 5; i++) expect(await text(c, `/${i}`)).toBe(`hello /${i}`);
    expect(s.conns.length).toBe(1);
  });

  it('POST with a body, and a large PUT echoed back', async () => {
    const [, c] = await setup();
    const r = await c.request({ path: '/echo', method: 'POST', body: 'payload' });
    expect(r.headers['x-method']).toBe('POST');
    expect(await r.body.text()).toBe('payload');
    const big = Buffer.alloc(3 << 20, 'q');
    const r2 = await c.request({ path: '/echo', method: 'PUT', body: big });
    expect(Buffer.compare(Buffer.from(await r2.body.arrayBuffer()), big)).toBe(0);
  });

  it('chunked response with trailers', async () => {
    const [, c] = await setup();
    const res = await c.request({ path: '/chunked', method: 'GET' });
    expect(await res.body.text()).toBe('chunk one, chunk two');
    expect(res.trailers).toEqual({ 'x-checksum': 'abc123' });
  });

  it('streamed request body', async () => {
    const [, c] = await setup();
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(32 << 10, 97 + (i % 26)));
    const res = await c.request({ path: '/echo', method: 'POST', body: Readable.from(chunks) });
    const got = Buffer.from(await res.body.arrayBuffer());
    expect(got.length).toBe(40 * (32 << 10));
    expect(Buffer.compare(got, Buffer.concat(chunks))).toBe(0);
  });

  it('pause holds the response back (the server feels it); resume gets the rest', async () => {
    const progress = new BodyProgress();
    const s = await serve(secure, routes(progress));
    const c = client(s.origin, opts());
    let bytes = 0;
    let controller: DispatchController | null = null;
    let pausedNow!: () => void;
    const paused = new Promise<void>((r) => (pausedNow = r));
    const done = new Promise<void>((resolve, reject) => {
      const handler: DispatchHandler = {
        onRequestStart(ctl) {
          controller = ctl;
        },
        // Required of a handler (undici checks it at dispatch).
        onResponseStart() {},
        onResponseData(ctl, chunk) {
          if (bytes === 0) {
            ctl.pause();
            pausedNow();
          }
          bytes += chunk.length;
        },
        onResponseEnd: () => resolve(),
        onResponseError: (_ctl, err) => reject(err),
      };
      c.dispatch({ path: '/big', method: 'GET' }, handler);
    });
    await paused;
    // Backpressure reached the server: it is blocked, and stays so while the client is paused.
    await serverStaysBlocked(progress);
    const whilePaused = bytes;
    await serverStaysBlocked(progress);
    expect(bytes).toBe(whilePaused);
    expect(progress.written).toBeLessThan(BIG);
    controller!.resume();
    await done;
    expect(bytes).toBe(BIG);
  });

  it('abort fails the request; the next one works on a new connection', async () => {
    const [s, c] = await setup();
    const ac = new AbortController();
    const { body } = await c.request({ path: '/hang', method: 'GET', signal: ac.signal });
    ac.abort();
    await expect(body.text()).rejects.toBeInstanceOf(errors.RequestAbortedError);
    expect(await text(c, '/after')).toBe('hello /after');
    expect(s.conns.length).toBe(2);
  });

  it('upgrade: a two-way tunnel over the connection', async () => {
    const [, c] = await setup();
    const { socket } = await c.upgrade({ path: '/', protocol: 'echo' });
    socket.write('ping');
    const [data] = await once(socket, 'data');
    expect(String(data)).toBe('ping');
    expect((socket as unknown as { encrypted: boolean }).encrypted).toBe(secure);
    expect((socket as unknown as { remoteAddress: string }).remoteAddress).toBe('127.0.0.1');
    socket.destroy();
  });

  it('a Pool spreads requests over several connections', async () => {
    const s = await serve(secure, routes());
    const p = track(new Pool(s.origin, { ...opts(), connections: 3 }));
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => text(p, `/p${i}`)));
    expect(results).toEqual(Array.from({ length: 6 }, (_, i) => `hello /p${i}`));
    expect(s.conns.length).toBeGreaterThan(1);
    expect(s.conns.length).toBeLessThanOrEqual(3);
  });
});
