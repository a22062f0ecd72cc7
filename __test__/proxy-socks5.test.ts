// Socks5ProxyAgent (and ProxyAgent with a socks5: URI) against a real local SOCKS5 server
// (fixtures/socks5.ts): with and without username/password, names resolved by the proxy, https
// origins with the engine's TLS through the tunnel, refusals as Socks5ProxyError.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ProxyAgent, Socks5ProxyAgent, errors, fetch, request } from '../ts/index.js';
import { fixtureCa, localhostPair } from './fixtures/proxy.js';
import { startSocks5 } from './fixtures/socks5.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

async function httpOrigin(): Promise<string> {
  return track(await httpServer((req, res) => res.end(`hello ${req.url} ${req.headers.host}`))).origin;
}

async function httpsPort(): Promise<number> {
  const server = createServer(localhostPair, (req, res) => res.end(`secure ${req.url}`));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  server.on('secureConnection', (s) => track({ close: async () => void s.destroy() }));
  return (server.address() as AddressInfo).port;
}

describe('Socks5ProxyAgent', () => {
  it('tunnels http requests without authentication, reusing the tunnel', async () => {
    const target = await httpOrigin();
    const socks = track(await startSocks5());
    const agent = track(new Socks5ProxyAgent(socks.origin));
    for (const p of ['/1', '/2']) {
      const { body } = await request(`${target}${p}`, { dispatcher: agent });
      expect(await body.text()).toBe(`hello ${p} ${new URL(target).host}`);
    }
    expect(socks.seen).toEqual([{ atyp: 1, host: '127.0.0.1', port: Number(new URL(target).port) }]);
  });

  it('sends host names to the proxy unresolved (remote DNS)', async () => {
    const port = Number(new URL(await httpOrigin()).port);
    const socks = track(await startSocks5());
    const agent = track(new Socks5ProxyAgent(socks.origin));
    const { body } = await request(`http://localhost:${port}/dns`, { dispatcher: agent });
    expect(await body.text()).toBe(`hello /dns localhost:${port}`);
    expect(socks.seen).toEqual([{ atyp: 3, host: 'localhost', port }]);
  });

  it('authenticates with username and password from the URL or the options', async () => {
    const target = await httpOrigin();
    const socks = track(await startSocks5({ credentials: { username: 'u@x', password: 'p:w' } }));
    const fromUrl = track(new Socks5ProxyAgent(socks.origin.replace('//', '//u%40x:p%3Aw@')));
    expect((await request(`${target}/a`, { dispatcher: fromUrl })).statusCode).toBe(200);
    const fromOpts = track(new Socks5ProxyAgent(socks.origin.replace('//', '//wrong:wrong@'), { username: 'u@x', password: 'p:w' }));
    expect((await request(`${target}/b`, { dispatcher: fromOpts })).statusCode).toBe(200);
    expect(socks.logins).toEqual(['u@x:p:w', 'u@x:p:w']);
  });

  it('fails with Socks5ProxyError on bad credentials, without naming them', async () => {
    const target = await httpOrigin();
    const socks = track(await startSocks5({ credentials: { username: 'u', password: 'right' } }));
    const agent = track(new Socks5ProxyAgent(socks.origin, { username: 'u', password: 's3cret' }));
    const err = (await request(`${target}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(errors.Socks5ProxyError);
    expect(err).toMatchObject({ code: 'UND_ERR_SOCKS5_AUTH_FAILED' });
    expect(`${err.message} ${err.stack}`).not.toContain('s3cret');
  });

  it('fails when the proxy wants credentials the agent does not have', async () => {
    const socks = track(await startSocks5({ credentials: { username: 'u', password: 'p' } }));
    const agent = track(new Socks5ProxyAgent(socks.origin));
    const err = await request(`${await httpOrigin()}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ name: 'Socks5ProxyError', code: 'UND_ERR_SOCKS5_AUTH_REJECTED' });
  });

  it('reports a refused CONNECT with the reply code', async () => {
    const socks = track(await startSocks5({ reply: 5 }));
    const agent = track(new Socks5ProxyAgent(socks.origin));
    const err = await request(`${await httpOrigin()}/`, { dispatcher: agent }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.Socks5ProxyError);
    expect(err).toMatchObject({ code: 'UND_ERR_SOCKS5_REPLY_5', message: 'SOCKS5 connection failed: connection refused' });
  });

  it('runs https through the tunnel with the engine TLS, for request and fetch', async () => {
    const port = await httpsPort();
    const socks = track(await startSocks5());
    const agent = track(new Socks5ProxyAgent(socks.origin, { requestTls: { ca: fixtureCa } }));
    const { body } = await request(`https://localhost:${port}/s`, { dispatcher: agent });
    expect(await body.text()).toBe('secure /s');
    const res = await fetch(`https://localhost:${port}/f`, { dispatcher: agent });
    expect(await res.text()).toBe('secure /f');
    expect(socks.seen.map((s) => s.host)).toEqual(['localhost']);
  });

  it('is what ProxyAgent uses for socks5: and socks: URIs', async () => {
    const target = await httpOrigin();
    const socks = track(await startSocks5({ credentials: { username: 'a', password: 'b' } }));
    for (const scheme of ['socks5', 'socks']) {
      const agent = track(new ProxyAgent(`${scheme}://a:b@127.0.0.1:${socks.port}`));
      expect((await request(`${target}/${scheme}`, { dispatcher: agent })).statusCode).toBe(200);
    }
    expect(socks.seen).toHaveLength(2);
  });

  it('validates its arguments', () => {
    expect(() => new Socks5ProxyAgent('')).toThrow(errors.InvalidArgumentError);
    expect(() => new Socks5ProxyAgent('http://127.0.0.1:1080')).toThrow(errors.InvalidArgumentError);
    expect(() => new Socks5ProxyAgent('socks5://127.0.0.1:1080', { connectTimeout: -1 })).toThrow(errors.InvalidArgumentError);
  });
});
