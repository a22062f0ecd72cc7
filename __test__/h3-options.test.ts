// `allowH3` / `h3Options` validation (InvalidArgumentError at construction, on every dispatcher
// that takes them) and the Alt-Svc field parser (RFC 7838).
import { describe, expect, it } from 'vitest';
import { Agent, BalancedPool, Client, EnvHttpProxyAgent, Pool, RoundRobinPool, errors } from '../ts/index.js';
import { parseAltSvc } from '../ts/dispatcher/alt-svc.js';

describe('allowH3 / h3Options validation', () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ allowH3: 'yes' }, /allowH3 must be a valid boolean value/],
    [{ allowH3: true, h3Options: 5 }, /h3Options must be an object/],
    [{ allowH3: true, h3Options: { priorKnowledge: 1 } }, /h3Options.priorKnowledge must be a valid boolean/],
    [{ allowH3: true, h3Options: { maxConcurrentStreams: 0 } }, /h3Options.maxConcurrentStreams must be an integer/],
    [{ allowH3: true, h3Options: { idleTimeout: -1 } }, /h3Options.idleTimeout must be an integer/],
    [{ allowH3: true, h3Options: { initialMaxData: 1.5 } }, /h3Options.initialMaxData must be an integer/],
    [{ allowH3: true, h3Options: { initialMaxStreamData: 2 ** 40 } }, /h3Options.initialMaxStreamData must be an integer/],
    [{ allowH3: true, h3Options: { fallbackTimeout: 0 } }, /h3Options.fallbackTimeout must be an integer/],
  ];
  for (const [opts, message] of bad) {
    it(`refuses ${JSON.stringify(opts)}`, () => {
      expect(() => new Client('https://localhost:1', opts)).toThrow(errors.InvalidArgumentError);
      expect(() => new Client('https://localhost:1', opts)).toThrow(message);
      expect(() => new Pool('https://localhost:1', opts)).toThrow(message);
    });
  }

  it('checks them on Agent, BalancedPool, RoundRobinPool and EnvHttpProxyAgent as their pools are made', async () => {
    const opts = { allowH3: 'no' } as unknown as { allowH3: boolean };
    expect(() => new BalancedPool(['https://localhost:1'], opts)).toThrow(/allowH3 must be a valid boolean value/);
    const rr = new RoundRobinPool('https://localhost:1', opts);
    await expect(rr.request({ path: '/', method: 'GET' })).rejects.toThrow(/allowH3 must be a valid boolean value/);
    await rr.close();
    const agent = new Agent(opts);
    await expect(agent.request({ origin: 'https://localhost:1', path: '/', method: 'GET' })).rejects.toThrow(/allowH3 must be a valid boolean value/);
    await agent.close();
    const env = new EnvHttpProxyAgent({ ...opts, noProxy: '*' });
    await expect(env.request({ origin: 'https://localhost:1', path: '/', method: 'GET' })).rejects.toThrow(/allowH3 must be a valid boolean value/);
    await env.close();
  });

  it('prior knowledge needs an https: origin', () => {
    expect(() => new Client('http://localhost:1', { allowH3: true, h3Options: { priorKnowledge: true } })).toThrow(/needs an https: origin/);
    // allowH3 alone on http: is no error: Alt-Svc is only learned from HTTPS responses.
    void new Client('http://localhost:1', { allowH3: true }).close();
  });
});

describe('parseAltSvc', () => {
  it('reads h3 entries in their host forms, with ma defaulting to 24 hours', () => {
    expect(parseAltSvc('h3=":443"')).toEqual({ host: '', port: 443, maxAge: 86400 });
    expect(parseAltSvc('h3="alt.example:8443"; ma=60')).toEqual({ host: 'alt.example', port: 8443, maxAge: 60 });
    expect(parseAltSvc('h3="[::1]:9000";ma=5; persist=1')).toEqual({ host: '[::1]', port: 9000, maxAge: 5 });
    expect(parseAltSvc('h2=":443", h3-29=":443", h3=":444"; ma=7')).toEqual({ host: '', port: 444, maxAge: 7 });
  });
  it('clear, and what names no usable h3 endpoint', () => {
    expect(parseAltSvc(' clear ')).toBe('clear');
    expect(parseAltSvc('h2=":443"')).toBeNull();
    expect(parseAltSvc('h3=443')).toBeNull();
    expect(parseAltSvc('h3=":0"')).toBeNull();
    expect(parseAltSvc('h3=":70000"')).toBeNull();
    expect(parseAltSvc('h3="a/b:1"')).toBeNull();
    expect(parseAltSvc('')).toBeNull();
  });
  it('a bad ma leaves the default', () => {
    expect(parseAltSvc('h3=":1"; ma=-3')).toEqual({ host: '', port: 1, maxAge: 86400 });
    expect(parseAltSvc('h3=":1"; ma="30"')).toEqual({ host: '', port: 1, maxAge: 30 });
  });
});
