// EnvHttpProxyAgent: which proxy (or none) each request takes, from http_proxy / https_proxy /
// no_proxy (lower case over upper case) or the options overriding them, against real local
// proxies; and every NO_PROXY form (ports, leading dots, `*.`, `*`, IPv4 and IPv6 literals).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnvHttpProxyAgent, errors, fetch, request } from '../ts/index.js';
import { NoProxy } from '../ts/proxy/no-proxy.js';
import { startProxy, type Proxy } from './fixtures/proxy.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();
const VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];
let saved: Record<string, string | undefined> = {};
beforeEach(() => {
  saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]));
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

async function origin(): Promise<string> {
  return track(await httpServer((req, res) => res.end(`direct ${req.url}`))).origin;
}

/** The text of GET `url` through `agent`. */
async function get(agent: EnvHttpProxyAgent, url: string): Promise<string> {
  const { body } = await request(url, { dispatcher: agent });
  return body.text();
}

describe('NO_PROXY rules', () => {
  const cases: [string, string, boolean][] = [
    ['example.com', 'http://example.com/', true],
    ['example.com', 'http://sub.example.com/', true],
    ['example.com', 'http://notexample.com/', false],
    ['.example.com', 'http://example.com/', true],
    ['.example.com', 'http://a.b.example.com/', true],
    ['*.example.com', 'http://example.com/', false],
    ['*.example.com', 'http://a.example.com/', true],
    ['example.com.', 'http://EXAMPLE.com/', true],
    ['example.com', 'http://example.com./', true],
    ['example.com:8080', 'http://example.com:8080/', true],
    ['example.com:8080', 'http://example.com/', false],
    ['example.com:443', 'https://example.com/', true],
    ['example.com:80', 'https://example.com/', false],
    ['*', 'http://anything.test/', true],
    ['other.test *', 'http://anything.test/', true],
    ['*:80', 'http://anything.test/', true],
    ['*:80', 'https://anything.test/', false],
    ['127.0.0.1', 'http://127.0.0.1:3000/', true],
    ['127.0.0.1:3000', 'http://127.0.0.1:3001/', false],
    ['10.0.0.1', 'http://10.0.0.10/', false],
    ['::1', 'http://[::1]:3000/', true],
    ['[::1]', 'http://[::1]/', true],
    ['[::1]:3000', 'http://[::1]:3000/', true],
    ['[::1]:3000', 'http://[::1]:4000/', false],
    ['a.test, b.test  c.test', 'http://c.test/', true],
    ['', 'http://example.com/', false],
  ];
  it.each(cases)('%j for %s → bypass %s', (rule, url, bypass) => {
    expect(new NoProxy(rule).bypasses(new URL(url))).toBe(bypass);
  });
});

describe('EnvHttpProxyAgent', () => {
  let proxyA: Proxy;
  let proxyB: Proxy;
  beforeEach(async () => {
    proxyA = track(await startProxy());
    proxyB = track(await startProxy());
  });

  it('takes http_proxy for http requests, lower case over upper case', async () => {
    const target = await origin();
    process.env.http_proxy = proxyA.origin;
    process.env.HTTP_PROXY = proxyB.origin;
    const agent = track(new EnvHttpProxyAgent());
    expect(await get(agent, `${target}/a`)).toBe('direct /a');
    expect(proxyA.seen.map((s) => s.url)).toEqual([`${target}/a`]);
    expect(proxyB.seen).toHaveLength(0);
  });

  it('takes HTTP_PROXY when only the upper-case form is set', async () => {
    const target = await origin();
    process.env.HTTP_PROXY = proxyB.origin;
    const agent = track(new EnvHttpProxyAgent());
    await get(agent, `${target}/b`);
    expect(proxyB.seen).toHaveLength(1);
  });

  it('uses https_proxy for https only: http requests go direct', async () => {
    const target = await origin();
    process.env.https_proxy = proxyA.origin;
    const agent = track(new EnvHttpProxyAgent());
    expect(await get(agent, `${target}/c`)).toBe('direct /c');
    expect(proxyA.seen).toHaveLength(0);
    // An https request goes to the https proxy (the tunnel target refuses: no server there).
    await request('https://127.0.0.1:9/', { dispatcher: agent }).catch(() => {});
    expect(proxyA.seen.map((s) => [s.method, s.url])).toEqual([['CONNECT', '127.0.0.1:9']]);
  });

  it('uses http_proxy for https too when https_proxy is unset', async () => {
    process.env.http_proxy = proxyA.origin;
    const agent = track(new EnvHttpProxyAgent());
    await request('https://127.0.0.1:9/', { dispatcher: agent }).catch(() => {});
    expect(proxyA.seen.map((s) => s.method)).toEqual(['CONNECT']);
  });

  it('lets options override the environment', async () => {
    const target = await origin();
    process.env.http_proxy = proxyA.origin;
    process.env.no_proxy = '*';
    const agent = track(new EnvHttpProxyAgent({ httpProxy: proxyB.origin, noProxy: '' }));
    await get(agent, `${target}/d`);
    expect(proxyA.seen).toHaveLength(0);
    expect(proxyB.seen).toHaveLength(1);
  });

  it('bypasses the proxy for NO_PROXY hosts, ports and wildcards', async () => {
    const target = await origin();
    const { port } = new URL(target);
    process.env.http_proxy = proxyA.origin;
    const agent = track(new EnvHttpProxyAgent());
    const routes: [string, boolean][] = [
      [`127.0.0.1:${port}`, false],
      [`127.0.0.1:${Number(port) + 1}`, true],
      ['127.0.0.1', false],
      ['*', false],
      ['other.test', true],
      [`.localhost:${port}`, false],
    ];
    for (const [rule, proxied] of routes) {
      process.env.NO_PROXY = rule;
      const before = proxyA.seen.length;
      const host = rule.startsWith('.localhost') ? target.replace('127.0.0.1', 'localhost') : target;
      expect(await get(agent, `${host}/r`)).toBe('direct /r');
      expect([rule, proxyA.seen.length - before]).toEqual([rule, proxied ? 1 : 0]);
    }
  });

  it('reads no_proxy again when it changes, lower case over upper case', async () => {
    const target = await origin();
    process.env.http_proxy = proxyA.origin;
    process.env.NO_PROXY = '127.0.0.1';
    const agent = track(new EnvHttpProxyAgent());
    await get(agent, `${target}/1`);
    expect(proxyA.seen).toHaveLength(0);
    process.env.no_proxy = 'other.test';
    await get(agent, `${target}/2`);
    expect(proxyA.seen).toHaveLength(1);
  });

  it('keeps an explicit noProxy when the environment changes', async () => {
    const target = await origin();
    process.env.http_proxy = proxyA.origin;
    const agent = track(new EnvHttpProxyAgent({ noProxy: '127.0.0.1' }));
    process.env.no_proxy = 'other.test';
    await get(agent, `${target}/3`);
    expect(proxyA.seen).toHaveLength(0);
  });

  it('goes direct with no proxy configured, and serves fetch', async () => {
    const target = await origin();
    const agent = track(new EnvHttpProxyAgent());
    const res = await fetch(`${target}/f`, { dispatcher: agent });
    expect(await res.text()).toBe('direct /f');
    process.env.http_proxy = proxyA.origin;
    const proxied = track(new EnvHttpProxyAgent());
    expect(await (await fetch(`${target}/g`, { dispatcher: proxied })).text()).toBe('direct /g');
    expect(proxyA.seen.map((s) => s.url)).toEqual([`${target}/g`]);
  });

  it('passes proxy options through to its proxy agents', async () => {
    const target = await origin();
    const proxy = track(await startProxy({ auth: 'Bearer t0k' }));
    const agent = track(new EnvHttpProxyAgent({ httpProxy: proxy.origin, token: 'Bearer t0k' }));
    expect(await get(agent, `${target}/h`)).toBe('direct /h');
    const bad = track(new EnvHttpProxyAgent({ httpProxy: proxy.origin, token: 'Bearer nope' }));
    const err = await request(`${target}/`, { dispatcher: bad }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 407 });
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
  });
});
