// connect() and upgrade(): the socket handed out is a Duplex over the engine's connection.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Client, errors } from '../ts/index.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const track = cleanup.track;

function readAll(socket: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

/** A server speaking an "echo" protocol after a 101. */
async function echoUpgradeServer(): Promise<Running<import('node:http').Server>> {
  const srv = track(await httpServer((req, res) => res.end('no upgrade here')));
  srv.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\n' +
        `Upgrade: ${req.headers.upgrade}\r\nConnection: Upgrade\r\nX-Seen-Path: ${req.url}\r\n\r\n`,
    );
    if (head.length) socket.write(head);
    socket.on('data', (d) => socket.write(`echo:${d}`));
    socket.on('end', () => socket.end());
  });
  return srv;
}

describe('upgrade()', () => {
  it('upgrades to an echo protocol and talks both ways with half-close', async () => {
    const srv = await echoUpgradeServer();
    const client = track(new Client(srv.origin));
    const { headers, socket, opaque } = await client.upgrade({ path: '/chat', protocol: 'echo', opaque: 'op' });
    expect(headers.upgrade).toBe('echo');
    expect(headers['x-seen-path']).toBe('/chat');
    expect(opaque).toBe('op');
    const all = readAll(socket);
    socket.write('ping');
    await once(socket, 'data');
    socket.end();
    expect(await all).toBe('echo:ping');
    expect((socket as unknown as { remoteAddress: string }).remoteAddress).toBe('127.0.0.1');
  });

  it("the server's end ends our side too (a net.Socket's default, as undici's upgraded socket)", async () => {
    const srv = track(await httpServer((_req, res) => res.end()));
    let serverSocket: Socket | null = null;
    srv.server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
      serverSocket = socket;
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nbye');
    });
    const client = track(new Client(srv.origin));
    const { socket } = await client.upgrade({ path: '/', protocol: 'echo' });
    expect(await readAll(socket)).toBe('bye');
    // Without our FIN the server's socket would stay half-open (and its server's close() wait).
    await once(serverSocket!, 'close');
    expect(socket.writableEnded).toBe(true);
  });

  it('callback form, and the connection is not returned to the pool', async () => {
    const srv = await echoUpgradeServer();
    let sockets = 0;
    srv.server.on('connection', () => sockets++);
    const client = track(new Client(srv.origin));
    const data = await new Promise<{ socket: Duplex }>((resolve, reject) =>
      client.upgrade({ path: '/', protocol: 'echo' }, (err, d) => (err ? reject(err) : resolve(d))),
    );
    // A normal request afterwards needs a fresh connection: the upgraded one belongs to the user.
    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('no upgrade here');
    expect(sockets).toBe(2);
    data.socket.destroy();
  });

  it('fails with SocketError when the server answers without upgrading', async () => {
    const srv = track(await httpServer((req, res) => res.end('plain')));
    const client = track(new Client(srv.origin));
    await expect(client.upgrade({ path: '/', protocol: 'echo' })).rejects.toBeInstanceOf(errors.SocketError);
  });

  it('an aborted signal fails the upgrade', async () => {
    const srv = await echoUpgradeServer();
    const client = track(new Client(srv.origin));
    const ac = new AbortController();
    ac.abort();
    await expect(client.upgrade({ path: '/', protocol: 'echo', signal: ac.signal })).rejects.toBeInstanceOf(
      errors.RequestAbortedError,
    );
  });
});

describe('connect()', () => {
  it('opens a tunnel through an HTTP CONNECT proxy to a target server', async () => {
    // The target: a plain TCP echo-ish HTTP server.
    const target = track(await httpServer((req, res) => res.end(`target saw ${req.url}`)));
    // The proxy, written here: answers CONNECT by piping to the requested authority.
    const proxy = createServer();
    const seen: string[] = [];
    proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      seen.push(req.url!);
      const [host, port] = req.url!.split(':');
      const upstream = netConnect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\nX-Proxy: test\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const proxySockets = new Set<Socket>();
    proxy.on('connection', (s: Socket) => proxySockets.add(s));
    cleanup.push(
      () =>
        new Promise((r) => {
          for (const s of proxySockets) s.destroy();
          proxy.close(r);
        }),
    );
    const proxyOrigin = `http://127.0.0.1:${(proxy.address() as import('node:net').AddressInfo).port}`;

    const client = track(new Client(proxyOrigin));
    const authority = `127.0.0.1:${target.port}`;
    const { statusCode, headers, socket } = await client.connect({ path: authority });
    expect(statusCode).toBe(200);
    expect(headers['x-proxy']).toBe('test');
    expect(seen).toEqual([authority]);
    // Speak HTTP/1.1 to the target through the tunnel by hand.
    const reply = readAll(socket);
    socket.write(`GET /through HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
    const text = await reply;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain('target saw /through');
  });

  it('fails with SocketError when the proxy refuses', async () => {
    const proxy = track(await httpServer((req, res) => res.end()));
    proxy.server.on('connect', (_req: IncomingMessage, s: Socket) => s.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n'));
    const client = track(new Client(proxy.origin));
    await expect(client.connect({ path: 'example.com:443' })).rejects.toBeInstanceOf(errors.SocketError);
  });
});

describe('top-level connect() and upgrade() on the global dispatcher', () => {
  it('upgrade(url, options) and connect(url, options) use the given or global dispatcher', async () => {
    const { upgrade, connect, setGlobalDispatcher, getGlobalDispatcher, Agent } = await import('../ts/index.js');
    const srv = await echoUpgradeServer();
    const previous = getGlobalDispatcher();
    const agent = new Agent();
    setGlobalDispatcher(agent);
    try {
      const { socket } = await upgrade(`${srv.origin}/top`, { protocol: 'echo' })!;
      const all = readAll(socket);
      socket.end('x');
      expect(await all).toBe('echo:x');
      const proxy = track(await httpServer((req, res) => res.end()));
      proxy.server.on('connect', (_req: IncomingMessage, s: Socket) => s.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n'));
      await expect(connect(proxy.origin, { path: 'example.com:443', dispatcher: agent })).rejects.toBeInstanceOf(errors.SocketError);
    } finally {
      setGlobalDispatcher(previous);
      await agent.close();
    }
  });
});

describe('upgrade over TLS', () => {
  it('the upgraded socket is encrypted and reports the negotiated ALPN protocol', async () => {
    const { readFileSync } = await import('node:fs');
    const { createServer: createHttps } = await import('node:https');
    const tlsDir = new URL('./fixtures/tls/', import.meta.url);
    const read = (f: string): string => readFileSync(new URL(f, tlsDir), 'utf8');
    const server = createHttps({ key: read('localhost.key'), cert: read('localhost.pem'), ALPNProtocols: ['http/1.1'] });
    server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.on('data', (d) => socket.write(d));
      socket.on('end', () => socket.end());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => new Promise((r) => server.close(r)));
    const port = (server.address() as import('node:net').AddressInfo).port;
    const client = track(new Client(`https://localhost:${port}`, { connect: { ca: read('ca.pem') } }));
    const { socket } = await client.upgrade({ path: '/', protocol: 'echo' });
    const s = socket as unknown as { encrypted: boolean; alpnProtocol: string | false; remotePort: number };
    expect(s.encrypted).toBe(true);
    expect(s.alpnProtocol).toBe('http/1.1');
    expect(s.remotePort).toBe(port);
    const all = readAll(socket);
    socket.end('secret');
    expect(await all).toBe('secret');
  });
});
