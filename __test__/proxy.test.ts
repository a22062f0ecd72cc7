// ProxyAgent against a real local proxy (fixtures/proxy.ts): absolute-form forwarding for http
// origins, CONNECT tunnels for https origins with the origin's TLS run by the engine over the
// tunnel, an https proxy (TLS inside TLS), proxy authentication, refusals with their status, a
// proxy that drops the tunnel mid-response, and request / fetch through the agent.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import dc from 'node:diagnostics_channel';
import { createServer, type ServerOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Pool, ProxyAgent, errors, fetch, request } from '../ts/index.js';
import { fixtureCa, localhostPair, startProxy } from './fixtures/proxy.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What the origin saw: path, host and whether proxy credentials leaked to it. */
const echo: Handler = (req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ url: req.url, host: req.headers.host, proxyAuth: req.headers['proxy-authorization'] ?? null }));
};

async function httpsOrigin(handler: Handler = echo, extra: ServerOptions = {}): Promise<string> {
  const server = createServer({ ...localhostPair, ...extra }, handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  server.on('secureConnection', (s) => track({ close: async () => void s.destroy() }));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function httpOrigin(handler: Handler = echo): Promise<string> {
  return track(await httpServer(handler)).origin;
}

const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

async function json(agent: ProxyAgent, url: string): Promise<{ url: string; host: string; proxyAuth: string | null }> {
  const { statusCode, body } = await request(url, { dispatcher: agent });
  expect(statusCode).toBe(200);
  return (await body.json()) as { url: string; host: string; proxyAuth: string | null };
}

describe('ProxyAgent: http origins in absolute form', () => {
  it('forwards GET http://origin/path to the proxy, with the origin as host', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent(proxy.origin));
    const seen = await json(agent, `${origin}/a/b?c=1`);
    expect(seen).toEqual({ url: '/a/b?c=1', host: new URL(origin).host, proxyAuth: null });
    expect(proxy.seen.map((s) => [s.method, s.url])).toEqual([['GET', `${origin}/a/b?c=1`]]);
    expect(proxy.tunnels).toBe(0);
  });

  it('sends the proxy headers and credentials to the proxy, never to the origin', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy({ auth: basic('user', 'p@ss') }));
    const agent = track(new ProxyAgent({ uri: proxy.origin.replace('//', '//user:p%40ss@'), headers: { 'x-proxy': 'yes' } }));
    const seen = await json(agent, `${origin}/x`);
    expect(seen.proxyAuth).toBe(null);
    expect(proxy.seen[0].headers['proxy-authorization']).toBe(basic('user', 'p@ss'));
    expect(proxy.seen[0].headers['x-proxy']).toBe('yes');
  });

  it('fails a request the proxy answers with 407 with InvalidArgumentError carrying the status', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy({ auth: basic('user', 'right') }));
    const agent = track(new ProxyAgent(proxy.origin.replace('//', '//user:wrong@')));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
    expect(err).toMatchObject({ code: 'UND_ERR_INVALID_ARG', statusCode: 407, message: 'Proxy Authentication Required (407)' });
  });

  it('tunnels http origins with proxyTunnel: true', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, proxyTunnel: true }));
    expect((await json(agent, `${origin}/t`)).url).toBe('/t');
    expect(proxy.seen.map((s) => [s.method, s.url])).toEqual([['CONNECT', new URL(origin).host]]);
    expect(proxy.tunnels).toBe(1);
  });
});

describe('ProxyAgent: https origins through CONNECT', () => {
  it('tunnels with CONNECT and keeps using the tunnel for further requests', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    for (const path of ['/1', '/2', '/3']) expect((await json(agent, `${origin}${path}`)).url).toBe(path);
    const authority = new URL(origin).host;
    expect(proxy.seen).toHaveLength(1);
    expect(proxy.seen[0]).toMatchObject({ method: 'CONNECT', url: authority });
    expect(proxy.seen[0].headers).toMatchObject({ host: authority, 'proxy-connection': 'keep-alive' });
  });

  it('serves concurrent requests over several tunnels, each its own connection', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa }, connections: 4 }));
    const paths = Array.from({ length: 12 }, (_, i) => `/c${i}`);
    const seen = await Promise.all(paths.map((p) => json(agent, `${origin}${p}`)));
    expect(seen.map((s) => s.url)).toEqual(paths);
    expect(proxy.tunnels).toBeGreaterThan(1);
    expect(proxy.tunnels).toBeLessThanOrEqual(4);
  });

  it("runs the origin's TLS in the engine: a server offering only CBC suites (which rustls lacks) fails", async () => {
    // Node's OpenSSL would accept this suite; the engine's rustls offers AEAD suites only.
    const origin = await httpsOrigin(echo, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256' });
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e as Error & { code?: string });
    // Node's own error (a plain Error with an OpenSSL-style code), as Node's TLS would give.
    expect(err).toBeInstanceOf(Error);
    expect(err?.code).toBe('ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE');
    expect(proxy.tunnels).toBe(1);
    // A TLS option only Node honours puts Node's TLS over the tunnel instead, and then it works.
    const viaNode = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa, ciphers: 'ECDHE-ECDSA-AES128-SHA256' } }));
    expect((await json(viaNode, `${origin}/node`)).url).toBe('/node');
  });

  it('verifies the origin certificate inside the tunnel', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent(proxy.origin));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e as Error & { code?: string });
    expect(err?.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('authenticates with credentials from the URI, token or auth', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy({ auth: basic('u', 'p w') }));
    const variants = [
      { uri: proxy.origin.replace('//', '//u:p%20w@') },
      { uri: proxy.origin, token: basic('u', 'p w') },
      { uri: proxy.origin, auth: Buffer.from('u:p w').toString('base64') },
    ];
    for (const v of variants) {
      const agent = track(new ProxyAgent({ ...v, requestTls: { ca: fixtureCa } }));
      const seen = await json(agent, `${origin}/auth`);
      expect(seen.proxyAuth).toBe(null);
    }
    expect(proxy.tunnels).toBe(3);
  });

  it('fails a 407 to CONNECT with RequestAbortedError carrying the status, and no credentials in it', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy({ auth: basic('user', 'right') }));
    const agent = track(new ProxyAgent({ uri: proxy.origin.replace('//', '//user:s3cret@'), requestTls: { ca: fixtureCa } }));
    const err = (await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e)) as Error & { statusCode?: number };
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    expect(err).toMatchObject({ code: 'UND_ERR_ABORTED', statusCode: 407, message: 'Proxy response (407) !== 200 when HTTP Tunneling' });
    const everything = `${err.message} ${err.stack} ${JSON.stringify(err)} ${String((err as { cause?: unknown }).cause)}`;
    expect(everything).not.toContain('s3cret');
    expect(everything).not.toContain(Buffer.from('user:s3cret').toString('base64'));
  });

  it('fails a refused CONNECT (403, 502) with the status', async () => {
    const origin = await httpsOrigin();
    for (const status of [403, 502]) {
      const proxy = track(await startProxy({ refuseConnect: status }));
      const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
      const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(errors.RequestAbortedError);
      expect(err).toMatchObject({ statusCode: status });
    }
  });

  it('fails with SocketError when the proxy drops the tunnel mid-response', async () => {
    const big = Buffer.alloc(256 * 1024, 'x');
    const origin = await httpsOrigin((_req, res) => res.end(big));
    const proxy = track(await startProxy({ dropAfterBytes: 20_000 }));
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const err = await request(`${origin}/`, { dispatcher: agent })
      .then((r) => r.body.arrayBuffer())
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(proxy.tunnels).toBe(1);
  });

  it('fails with ProxyConnectionError when the proxy closes before answering CONNECT', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    proxy.server.removeAllListeners('connect');
    proxy.server.on('connect', (_req, socket: import('node:net').Socket) => socket.destroy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ProxyConnectionError);
    expect(err).toMatchObject({ code: 'UND_ERR_PRX_CONN' });
  });

  it('fails with the connect error when the proxy is not listening', async () => {
    const proxy = await startProxy();
    await proxy.close();
    const agent = track(new ProxyAgent(proxy.origin));
    const err = await request('http://127.0.0.1:9/', { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('ProxyAgent: an https proxy', () => {
  it('speaks TLS to the proxy, then TLS to the origin inside it', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy({ tls: true }));
    const agent = track(new ProxyAgent({ uri: proxy.origin, proxyTls: { ca: fixtureCa }, requestTls: { ca: fixtureCa } }));
    expect((await json(agent, `${origin}/tls-in-tls`)).url).toBe('/tls-in-tls');
    expect(proxy.seen[0].method).toBe('CONNECT');
  });

  it('forwards http origins over TLS to the proxy', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy({ tls: true }));
    const agent = track(new ProxyAgent({ uri: proxy.origin, proxyTls: { ca: fixtureCa } }));
    expect((await json(agent, `${origin}/plain`)).url).toBe('/plain');
    expect(proxy.seen[0].url).toBe(`${origin}/plain`);
  });

  it('fails with SecureProxyConnectionError when the proxy certificate is not trusted', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy({ tls: true }));
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SecureProxyConnectionError);
    expect(err).toMatchObject({ code: 'UND_ERR_PRX_TLS', cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' } });
  });
});

describe('ProxyAgent: fetch and options', () => {
  it('serves fetch for http and https origins', async () => {
    const plain = await httpOrigin();
    const secure = await httpsOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    const a = await fetch(`${plain}/f1`, { dispatcher: agent });
    expect(((await a.json()) as { url: string }).url).toBe('/f1');
    const b = await fetch(`${secure}/f2`, { dispatcher: agent, method: 'POST', body: 'x' });
    expect(((await b.json()) as { url: string }).url).toBe('/f2');
    expect(proxy.seen.map((s) => s.method)).toEqual(['GET', 'CONNECT']);
  });

  it('refuses a proxy-authorization request header in every header form', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent(proxy.origin));
    const forms = [
      { 'Proxy-Authorization': 'x' },
      ['proxy-authorization', 'x'],
      new Map([['proxy-authorization', 'x']]),
    ];
    for (const headers of forms) {
      const err = await request(`${origin}/`, { dispatcher: agent, headers: headers as never }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
    }
    expect(proxy.seen).toHaveLength(0);
  });

  it('validates its options without echoing the URI', () => {
    expect(() => new ProxyAgent({} as never)).toThrow(errors.InvalidArgumentError);
    expect(() => new ProxyAgent({ uri: 'http://p', auth: 'a', token: 'b' })).toThrow(errors.InvalidArgumentError);
    expect(() => new ProxyAgent({ uri: 'http://p', clientFactory: 1 as never })).toThrow(errors.InvalidArgumentError);
    expect(() => new ProxyAgent('ftp://p')).toThrow(errors.InvalidArgumentError);
    let message = '';
    try {
      new ProxyAgent('http://user:s3cret@[bad');
    } catch (err) {
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
      message = (err as Error).message;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('s3cret');
  });

  it('uses clientFactory for the connection to the proxy', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const made: string[] = [];
    const { Pool } = await import('../ts/index.js');
    const agent = track(
      new ProxyAgent({
        uri: proxy.origin,
        requestTls: { ca: fixtureCa },
        clientFactory: (o, opts) => {
          made.push(o.origin);
          return new Pool(o, opts);
        },
      }),
    );
    await json(agent, `${origin}/cf`);
    expect(made).toEqual([proxy.origin]);
  });

  it('closes and destroys its inner dispatchers', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy());
    const agent = new ProxyAgent(proxy.origin);
    await json(agent, `${origin}/`);
    await agent.close();
    expect(agent.closed).toBe(true);
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ClientClosedError);
    await agent.destroy();
    expect(agent.destroyed).toBe(true);
  });
});

describe('ProxyAgent: as undici on the wire, in errors and in diagnostics', () => {
  it('asks for connection: close on CONNECT, as undici does (the connection becomes the tunnel)', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa } }));
    await json(agent, `${origin}/`);
    expect(proxy.seen[0]).toMatchObject({ method: 'CONNECT', headers: { connection: 'close', 'proxy-connection': 'keep-alive' } });
  });

  it('publishes lib:proxy:connected with the tunnel and what the CONNECT asked', async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy({ tls: true }));
    const agent = track(
      new ProxyAgent({ uri: proxy.origin, proxyTls: { ca: fixtureCa, servername: 'localhost' }, requestTls: { ca: fixtureCa } }),
    );
    const messages: { socket: unknown; connectParams: Record<string, unknown> }[] = [];
    const onMessage = (m: unknown): void => void messages.push(m as (typeof messages)[number]);
    dc.subscribe('lib:proxy:connected', onMessage);
    try {
      await json(agent, `${origin}/`);
    } finally {
      dc.unsubscribe('lib:proxy:connected', onMessage);
    }
    expect(messages).toHaveLength(1);
    const authority = new URL(origin).host;
    expect(messages[0]!.connectParams).toEqual({
      origin: proxy.origin,
      port: String(proxy.port),
      path: authority,
      signal: undefined,
      headers: { 'proxy-connection': 'keep-alive', host: authority },
      servername: 'localhost',
    });
    expect(messages[0]!.socket).toHaveProperty('remotePort', proxy.port);
  });

  it('fails a forwarded request with SecureProxyConnectionError when the https proxy has the wrong name', async () => {
    const origin = await httpOrigin();
    const proxy = track(await startProxy({ tls: true }));
    const agent = track(new ProxyAgent({ uri: proxy.origin, proxyTls: { ca: fixtureCa, servername: 'wrong.example' } }));
    const err = await request(`${origin}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SecureProxyConnectionError);
    expect(err).toMatchObject({ code: 'UND_ERR_PRX_TLS', cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } });
    expect(proxy.seen).toHaveLength(0);
  });

  it("takes a factory typed (origin: URL, opts) as undici's types allow", async () => {
    const origin = await httpsOrigin();
    const proxy = track(await startProxy());
    const made: string[] = [];
    // Type-checked by __test__/tsconfig.json: undici declares `factory` as a method.
    const factory = (o: URL, opts: object): Pool => {
      made.push(String(o));
      return new Pool(o, opts);
    };
    const agent = track(new ProxyAgent({ uri: proxy.origin, requestTls: { ca: fixtureCa }, factory }));
    await json(agent, `${origin}/f`);
    expect(made).toEqual([origin]);
  });

  it('gives the connector to the proxy connectTimeout, and makes its sockets through net.connect as patched', async () => {
    let connect: ((opts: object, cb: (err: Error | null) => void) => unknown) | undefined;
    track(
      new ProxyAgent({
        uri: 'http://127.0.0.1:9',
        connectTimeout: 50,
        clientFactory: (_origin, options) => {
          connect = (options as { connect: typeof connect }).connect;
          return new Pool('http://127.0.0.1:9');
        },
      }),
    );
    // A socket that never connects, as mitm-style doubles hand out.
    const original = net.connect;
    const made: net.Socket[] = [];
    net.connect = ((opts: net.SocketConstructorOpts) => {
      const socket = new net.Socket(opts);
      made.push(socket);
      return socket;
    }) as typeof net.connect;
    try {
      const err = await new Promise<Error | null>((resolve) => connect!({ hostname: '127.0.0.1', protocol: 'http:', port: 9 }, resolve));
      expect(made).toHaveLength(1);
      expect(err).toBeInstanceOf(errors.ConnectTimeoutError);
      expect(err?.message).toBe('Connect Timeout Error (attempted address: 127.0.0.1:9, timeout: 50ms)');
    } finally {
      net.connect = original;
      for (const s of made) s.destroy();
    }
  });
});
