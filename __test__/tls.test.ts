// The engine's TLS path (rustls) against node:https servers with the fixture certificates in
// fixtures/tls (see generate.sh there): verification and Node's error codes, client certificates,
// session resumption, ALPN, servername, unix sockets and option validation.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { Client, Pool, errors } from '../ts/index.js';

const dir = join(import.meta.dirname, 'fixtures', 'tls');
const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
const ca = read('ca.pem');
const pair = (name: string): { key: string; cert: string } => ({ key: read(`${name}.key`), cert: read(`${name}.pem`) });

interface TlsServer {
  origin: string;
  port: number;
  /** One entry per TLS connection the server accepted. */
  conns: { reused: boolean; servername: string | false; alpn: string | false }[];
  close(): Promise<void>;
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
function track<T extends { close(): Promise<unknown> }>(x: T): T {
  cleanup.push(() => x.close());
  return x;
}

async function serve(
  opts: ServerOptions,
  listenOn: string | null = null,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (req, res) => {
    res.end(`hello ${(req.socket as TLSSocket).authorized ? 'authorized' : 'anonymous'}`);
  },
): Promise<TlsServer> {
  const server: Server = createServer({ ...pair('localhost'), ...opts }, handler);
  const conns: TlsServer['conns'] = [];
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: TLSSocket) => {
    conns.push({ reused: s.isSessionReused(), servername: (s as { servername?: string | false }).servername ?? false, alpn: s.alpnProtocol ?? false });
  });
  // Handshake failures are the point of several tests; keep them off the process.
  server.on('tlsClientError', () => {});
  if (listenOn) server.listen(listenOn);
  else server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = listenOn ? 0 : (server.address() as AddressInfo).port;
  return track({
    origin: `https://127.0.0.1:${port}`,
    port,
    conns,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}

async function get(client: Client | Pool, opts: { reset?: boolean } = {}): Promise<string> {
  const { statusCode, body } = await client.request({ path: '/', method: 'GET', ...opts });
  expect(statusCode).toBe(200);
  return body.text();
}

function client(origin: string, opts: ConstructorParameters<typeof Client>[1] = {}): Client {
  return track(new Client(origin, opts));
}

describe('certificate verification', () => {
  it('connects when the chain leads to `ca`', async () => {
    const s = await serve({});
    expect(await get(client(s.origin, { connect: { ca } }))).toBe('hello anonymous');
    // IP literal origin: no SNI is sent.
    expect(s.conns[0].servername).toBe(false);
  });

  it('verifies DNS names (localhost) and sends them as SNI', async () => {
    const s = await serve({});
    expect(await get(client(`https://localhost:${s.port}`, { connect: { ca } }))).toBe('hello anonymous');
    expect(s.conns[0].servername).toBe('localhost');
  });

  it('accepts ca as a Buffer and as an array', async () => {
    const s = await serve({});
    expect(await get(client(s.origin, { connect: { ca: Buffer.from(ca) } }))).toBe('hello anonymous');
    expect(await get(client(s.origin, { connect: { ca: [read('other-ca.pem'), ca] } }))).toBe('hello anonymous');
  });

  it('takes TLS options from the `tls` client option too', async () => {
    const s = await serve({});
    expect(await get(client(s.origin, { tls: { ca } }))).toBe('hello anonymous');
  });

  it('wrong host name → ERR_TLS_CERT_ALTNAME_INVALID', async () => {
    const s = await serve(pair('other'));
    const err = await client(s.origin, { connect: { ca } }).request({ path: '/', method: 'GET' }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    expect((err as Error).message).toContain("IP: 127.0.0.1 is not in the cert's list");
    const byName = client(`https://localhost:${s.port}`, { connect: { ca } });
    await expect(byName.request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      message: "Hostname/IP does not match certificate's altnames: Host: localhost. is not in the cert's altnames: DNS:other.test",
    });
  });

  it('self-signed leaf → DEPTH_ZERO_SELF_SIGNED_CERT', async () => {
    const s = await serve(pair('self-signed'));
    await expect(client(s.origin, { connect: { ca } }).request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      message: 'self-signed certificate',
    });
  });

  it('expired leaf → CERT_HAS_EXPIRED', async () => {
    const s = await serve(pair('expired'));
    await expect(client(s.origin, { connect: { ca } }).request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      code: 'CERT_HAS_EXPIRED',
      message: 'certificate has expired',
    });
  });

  it('leaf from an unknown CA → UNABLE_TO_VERIFY_LEAF_SIGNATURE', async () => {
    const s = await serve(pair('unknown-ca'));
    await expect(client(s.origin, { connect: { ca } }).request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      message: 'unable to verify the first certificate',
    });
  });

  it("trusts Node's root store when no `ca` is given (the test CA is not in it)", async () => {
    const s = await serve({});
    await expect(client(s.origin).request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('emits connectionError with the TLS error', async () => {
    const s = await serve(pair('expired'));
    const c = client(s.origin, { connect: { ca } });
    const failed = once(c, 'connectionError');
    await c.request({ path: '/', method: 'GET' }).catch(() => {});
    const [, , err] = await failed;
    expect(err).toMatchObject({ code: 'CERT_HAS_EXPIRED' });
  });

  it('rejectUnauthorized: false accepts any chain and name', async () => {
    for (const name of ['self-signed', 'expired', 'unknown-ca', 'other']) {
      const s = await serve(pair(name));
      expect(await get(client(s.origin, { connect: { rejectUnauthorized: false } }))).toBe('hello anonymous');
    }
  });

  it('servername overrides the name verified and sent as SNI', async () => {
    const s = await serve(pair('other'));
    expect(await get(client(s.origin, { connect: { ca, servername: 'other.test' } }))).toBe('hello anonymous');
    expect(s.conns[0].servername).toBe('other.test');
  });
});

describe('client certificates', () => {
  const requireCert: ServerOptions = { ca, requestCert: true, rejectUnauthorized: true };

  it('authenticates with cert + key', async () => {
    const s = await serve(requireCert);
    expect(await get(client(s.origin, { connect: { ca, ...pair('client') } }))).toBe('hello authorized');
  });

  it('decrypts an encrypted key with `passphrase`', async () => {
    const s = await serve(requireCert);
    const c = client(s.origin, { connect: { ca, cert: read('client.pem'), key: read('client-encrypted.key'), passphrase: 'secret' } });
    expect(await get(c)).toBe('hello authorized');
  });

  it('an encrypted key without its passphrase is an InvalidArgumentError', () => {
    expect(() => new Client('https://127.0.0.1:1', { connect: { ca, cert: read('client.pem'), key: read('client-encrypted.key') } })).toThrow(
      errors.InvalidArgumentError,
    );
    expect(
      () =>
        new Client('https://127.0.0.1:1', {
          connect: { ca, cert: read('client.pem'), key: read('client-encrypted.key'), passphrase: 'wrong' },
        }),
    ).toThrow(errors.InvalidArgumentError);
  });

  it('fails without a certificate (TLS 1.3: on the first read)', async () => {
    const s = await serve(requireCert);
    await expect(client(s.origin, { connect: { ca } }).request({ path: '/', method: 'GET' })).rejects.toMatchObject({
      name: 'SocketError',
      code: 'UND_ERR_SOCKET',
      message: 'received fatal alert: CertificateRequired',
    });
  });

  it('fails without a certificate (TLS 1.2: in the handshake)', async () => {
    const s = await serve(requireCert);
    await expect(
      client(s.origin, { connect: { ca, maxVersion: 'TLSv1.2' } }).request({ path: '/', method: 'GET' }),
    ).rejects.toMatchObject({ code: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE' });
  });
});

describe('sessions', () => {
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2']) {
    it(`resumes the session on the next connection (${maxVersion})`, async () => {
      const s = await serve({});
      const c = client(s.origin, { connect: { ca, maxVersion } });
      await get(c, { reset: true });
      await get(c);
      expect(s.conns.map((x) => x.reused)).toEqual([false, true]);
    });
  }

  it('shares sessions between clients with equal options', async () => {
    const s = await serve({});
    await get(client(s.origin, { connect: { ca } }), { reset: true });
    await get(client(s.origin, { connect: { ca } }));
    expect(s.conns.map((x) => x.reused)).toEqual([false, true]);
  });

  it('maxCachedSessions: 0 disables resumption', async () => {
    const s = await serve({});
    const c = client(s.origin, { connect: { ca }, maxCachedSessions: 0 });
    await get(c, { reset: true });
    await get(c);
    expect(s.conns.map((x) => x.reused)).toEqual([false, false]);
  });

  it('keeps one connection alive across requests (Pool)', async () => {
    const s = await serve({});
    const p = track(new Pool(s.origin, { connect: { ca }, connections: 1 }));
    for (let i = 0; i < 5; i++) await get(p);
    expect(s.conns.length).toBe(1);
  });
});

describe('ALPN', () => {
  async function offered(opts: ConstructorParameters<typeof Client>[1], choose = 'http/1.1'): Promise<[string[], Client]> {
    const seen: string[][] = [];
    const s = await serve({
      ALPNCallback: ({ protocols }) => {
        seen.push(protocols);
        return protocols.includes(choose) ? choose : undefined;
      },
    });
    const c = client(s.origin, { ...opts, connect: { ca, ...(opts?.connect as object) } });
    await c.request({ path: '/', method: 'GET' }).then((r) => r.body.text()).catch(() => {});
    return [seen[0], c];
  }

  it("offers ['http/1.1', 'h2'] by default (as undici 8); allowH2: false offers ['http/1.1']", async () => {
    expect((await offered({}))[0]).toEqual(['http/1.1', 'h2']);
    expect((await offered({ allowH2: false }))[0]).toEqual(['http/1.1']);
  });

  it("allowH2 offers ['http/1.1', 'h2']; preferH2 puts h2 first", async () => {
    expect((await offered({ allowH2: true }))[0]).toEqual(['http/1.1', 'h2']);
    expect((await offered({ connect: { allowH2: true, preferH2: true } }))[0]).toEqual(['h2', 'http/1.1']);
  });

  it('a server that picks h2 but answers in HTTP/1.1 fails the request with a socket error, never hangs', async () => {
    const s = await serve({ ALPNCallback: () => 'h2' });
    const c = client(s.origin, { connect: { ca } });
    const err = await c.request({ path: '/', method: 'GET' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect((err as Error).message).toMatch(/^HTTP\/2: /);
  });
});

describe('transport', () => {
  it('speaks TLS over a unix socket (socketPath with an https origin)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ferro-tls-')), 's.sock');
    const s = await serve({}, path);
    const c = client('https://localhost', { socketPath: path, connect: { ca } });
    expect(await get(c)).toBe('hello anonymous');
    expect(s.conns[0].servername).toBe('localhost');
  });

  it('carries large bodies both ways, pipelined', async () => {
    const s = await serve({}, null, (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        res.end(Buffer.concat([body, body]));
      });
    });
    const c = client(s.origin, { connect: { ca }, pipelining: 4 });
    const big = Buffer.alloc(1 << 20, 'x');
    const results = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const { body } = await c.request({ path: `/${i}`, method: 'PUT', body: big });
        return (await body.arrayBuffer()).byteLength;
      }),
    );
    expect(results).toEqual([2 << 20, 2 << 20, 2 << 20, 2 << 20]);
    // A streamed body, written as it arrives.
    const chunks = Array.from({ length: 64 }, () => Buffer.alloc(16 << 10, 'y'));
    const { body } = await c.request({ path: '/s', method: 'POST', body: Readable.from(chunks) });
    expect((await body.arrayBuffer()).byteLength).toBe(2 << 20);
    expect(s.conns.length).toBe(1);
  });

  it('honours minVersion / maxVersion', async () => {
    const s = await serve({ minVersion: 'TLSv1.3' });
    await expect(
      client(s.origin, { connect: { ca, maxVersion: 'TLSv1.2' } }).request({ path: '/', method: 'GET' }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^ERR_SSL_/) });
    expect(await get(client(s.origin, { connect: { ca, minVersion: 'TLSv1.3' } }))).toBe('hello anonymous');
  });

  it('reports a plain-HTTP server as a TLS failure', async () => {
    const { createServer: createHttp } = await import('node:http');
    const server = createHttp((_req, res) => res.end('plain'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    track({ close: () => new Promise<void>((r) => server.close(() => r())) });
    const { port } = server.address() as AddressInfo;
    const err = await client(`https://127.0.0.1:${port}`, { connect: { ca } })
      .request({ path: '/', method: 'GET' })
      .catch((e: Error) => e);
    // A system-style error (as Node's own TLS gives), not an UndiciError.
    expect(err.constructor).toBe(Error);
    expect((err as { code?: string }).code).toMatch(/^(ERR_SSL_|ECONNRESET)/);
  });
});

describe('options', () => {
  const origin = 'https://127.0.0.1:1';

  it('accepts OpenSSL-only options: those clients use Node TLS (connector.test.ts)', () => {
    for (const name of ['ciphers', 'checkServerIdentity', 'pfx', 'secureContext', 'secureOptions']) {
      track(new Client(origin, { connect: { [name]: 'x' } }));
    }
    // So do versions below what rustls speaks.
    track(new Client(origin, { connect: { ca, maxVersion: 'TLSv1.1' } }));
  });

  it('invalid PEM, versions and values are InvalidArgumentErrors', () => {
    const bad = [
      { connect: { ca: 'not a certificate' } },
      { connect: { ca: '-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n' } },
      { connect: { ca, cert: read('client.pem'), key: 'nope' } },
      { connect: { ca, cert: read('client.pem') } },
      { connect: { ca, minVersion: 'SSLv3' } },
      { connect: { ca, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.2' } },
      { connect: { ca, servername: 42 } },
      { connect: { ca }, maxCachedSessions: -1 },
      { connect: { ca }, allowH2: 'yes' },
    ];
    for (const opts of bad) {
      expect(() => new Client(origin, opts as never), JSON.stringify(opts).slice(0, 80)).toThrow(errors.InvalidArgumentError);
    }
    // A minimum below TLS 1.2 only widens what is allowed: fine.
    track(new Client(origin, { connect: { ca, minVersion: 'TLSv1' } }));
  });

  it('ignores TLS options for http origins', () => {
    track(new Client('http://127.0.0.1:1', { connect: { ca: 'not a certificate', ciphers: 'x' } as never }));
  });
});
