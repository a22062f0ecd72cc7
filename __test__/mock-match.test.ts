// Matching: path, method, body and headers as strings, RegExps and functions; queries; the first
// unconsumed match wins; and what a miss says — undici's headline, then the closest interceptor
// and the first field in which it differs.
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { errors } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import type { Interceptable } from '../ts/mock/mock-interceptor.js';
import { useCleanup } from './fixtures/cleanup.js';

const ORIGIN = 'http://localhost:3000';

const cleanup = useCleanup();

function setup(options?: MockAgent.Options): { agent: MockAgent; pool: Interceptable } {
  const agent = new MockAgent(options);
  agent.disableNetConnect();
  cleanup.push(() => agent.close());
  return { agent, pool: agent.get(ORIGIN) };
}

interface Init {
  method?: string;
  body?: string | Buffer | Readable;
  headers?: Record<string, string> | string[];
  query?: Record<string, unknown>;
}

async function text(agent: MockAgent, path: string, init: Init = {}, origin = ORIGIN): Promise<string> {
  const res = await agent.request({ origin, path, method: init.method ?? 'GET', body: init.body, headers: init.headers, query: init.query });
  return res.body.text();
}

/** The message of the MockNotMatchedError a request fails with. */
async function miss(agent: MockAgent, path: string, init: Init = {}, origin = ORIGIN): Promise<string> {
  try {
    await text(agent, path, init, origin);
  } catch (err) {
    expect(err).toBeInstanceOf(errors.MockNotMatchedError);
    expect((err as { code?: string }).code).toBe('UND_MOCK_ERR_MOCK_NOT_MATCHED');
    return (err as Error).message;
  }
  throw new Error('expected the request to miss');
}

describe('path', () => {
  it('matches a string exactly, with the query in any order', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/a?x=1&y=2' }).reply(200, 'a').persist();
    expect(await text(agent, '/a?y=2&x=1')).toBe('a');
    expect(await text(agent, '/a?x=1&y=2')).toBe('a');
    expect(await miss(agent, '/a')).toMatch(/^Mock dispatch not matched for path '\/a'/);
  });

  it('normalizes the pathname the way the URL parser writes it', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/with space/ünï' }).reply(200, 'encoded');
    expect(await text(agent, '/with%20space/%C3%BCn%C3%AF')).toBe('encoded');
  });

  it('builds the path from a query option, encoding values', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/q', query: { b: 'two words', a: 1 } }).reply(200, 'q').persist();
    expect(await text(agent, '/q?a=1&b=two%20words')).toBe('q');
    expect(await text(agent, '/q', { query: { a: 1, b: 'two words' } })).toBe('q');
  });

  it('gives a RegExp or function the path with its query sorted', async () => {
    const { agent, pool } = setup();
    const seen: string[] = [];
    pool.intercept({ path: /^\/re\/\d+$/ }).reply(200, 'regexp');
    pool.intercept({ path: (p) => (seen.push(p), p.startsWith('/fn?')) }).reply(200, 'function');
    expect(await text(agent, '/re/42')).toBe('regexp');
    expect(await text(agent, '/fn?z=1&a=2')).toBe('function');
    expect(seen).toContain('/fn?a=2&z=1');
  });

  it('resets a global RegExp between requests', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: /\/g/g }).reply(200, 'g').persist();
    expect(await text(agent, '/g')).toBe('g');
    expect(await text(agent, '/g')).toBe('g');
  });

  it('ignores a trailing slash per interceptor', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/t/', ignoreTrailingSlash: true }).reply(200, 'either').persist();
    expect(await text(agent, '/t')).toBe('either');
    expect(await text(agent, '/t/')).toBe('either');
    pool.intercept({ path: '/strict/' }).reply(200, 'strict');
    expect(await miss(agent, '/strict')).toContain("Mock dispatch not matched for path '/strict'");
  });
});

describe('method', () => {
  it('defaults to GET, is upper-cased, and takes a RegExp or function', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/m' }).reply(200, 'get');
    pool.intercept({ path: '/m', method: 'post' }).reply(200, 'post');
    pool.intercept({ path: '/m', method: /^(PUT|PATCH)$/ }).reply(200, 'put or patch');
    pool.intercept({ path: '/m', method: (m) => m === 'DELETE' }).reply(200, 'delete');
    expect(await text(agent, '/m', { method: 'POST' })).toBe('post');
    expect(await text(agent, '/m', { method: 'PATCH' })).toBe('put or patch');
    expect(await text(agent, '/m', { method: 'DELETE' })).toBe('delete');
    expect(await text(agent, '/m')).toBe('get');
  });
});

describe('body', () => {
  it('matches a string, a RegExp and a function', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/b', method: 'POST', body: 'exact' }).reply(200, 'string');
    pool.intercept({ path: '/b', method: 'POST', body: /^re/ }).reply(200, 'regexp');
    pool.intercept({ path: '/b', method: 'POST', body: (b) => JSON.parse(b).n === 1 }).reply(200, 'function');
    expect(await text(agent, '/b', { method: 'POST', body: 'regular' })).toBe('regexp');
    expect(await text(agent, '/b', { method: 'POST', body: '{"n":1}' })).toBe('function');
    expect(await text(agent, '/b', { method: 'POST', body: 'exact' })).toBe('string');
  });

  it('reads Buffer and streamed bodies as text', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/b', method: 'POST', body: 'from buffer' }).reply(200, 'buffer');
    pool.intercept({ path: '/b', method: 'POST', body: 'from stream' }).reply(200, (opts) => `stream saw ${String(opts.body)}`);
    expect(await text(agent, '/b', { method: 'POST', body: Buffer.from('from buffer') })).toBe('buffer');
    expect(await text(agent, '/b', { method: 'POST', body: Readable.from(['from ', 'stream']) })).toBe('stream saw from stream');
  });

  it('reports a streamed body that misses through the handler', async () => {
    const { agent } = setup();
    expect(await miss(agent, '/nothing', { method: 'POST', body: Readable.from(['x']) })).toContain(
      "Mock dispatch not matched for path '/nothing'",
    );
  });
});

describe('headers', () => {
  it('matches each named header case-insensitively, ignoring others', async () => {
    const { agent, pool } = setup();
    pool
      .intercept({ path: '/h', headers: { 'User-Agent': 'ferro', authorization: /^Bearer /, 'x-n': (v) => Number(v) > 1 } })
      .reply(200, 'headers')
      .persist();
    const headers = { 'user-agent': 'ferro', Authorization: 'Bearer abc', 'X-N': '2', extra: 'ignored' };
    expect(await text(agent, '/h', { headers })).toBe('headers');
    expect(await text(agent, '/h', { headers: Object.entries(headers).flat() })).toBe('headers');
  });

  it('passes every header, lower-cased, to a headers function', async () => {
    const { agent, pool } = setup();
    const seen: Record<string, string>[] = [];
    pool.intercept({ path: '/h', headers: (h) => (seen.push(h), h['x-key'] === 'k') }).reply(200, 'fn');
    expect(await text(agent, '/h', { headers: { 'X-Key': 'k', Other: 'o' } })).toBe('fn');
    expect(seen[0]).toEqual({ 'x-key': 'k', other: 'o' });
  });
});

describe('order', () => {
  it('checks path, then method, then body, then headers; the first unconsumed match wins', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/o' }).reply(200, 'one');
    pool.intercept({ path: '/o' }).reply(200, 'two');
    expect(await text(agent, '/o')).toBe('one');
    expect(await text(agent, '/o')).toBe('two');
  });

  it('consumes interceptors at dispatch, so concurrent requests take them in turn', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/c' }).reply(200, 'first').delay(20);
    pool.intercept({ path: '/c' }).reply(200, 'second');
    const results = await Promise.all([text(agent, '/c'), text(agent, '/c')]);
    expect(results).toEqual(['first', 'second']);
  });

  it('cleanMocks() removes every interceptor', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/x' }).reply(200, 'x');
    pool.cleanMocks();
    expect(agent.pendingInterceptors()).toEqual([]);
    await expect(text(agent, '/x')).rejects.toThrow(errors.MockNotMatchedError);
  });
});

describe('what a miss says', () => {
  it('names the stage where every interceptor dropped out, as undici does', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/foo', method: 'POST', body: 'hello', headers: { 'x-a': 'b' } }).reply(200).persist();
    const tail = `: subsequent request to origin ${ORIGIN} was not allowed (net.connect disabled), 1 interceptor(s) remaining out of 1 defined`;
    expect((await miss(agent, '/bar')).split('\n')[0]).toBe(`Mock dispatch not matched for path '/bar'${tail}`);
    expect((await miss(agent, '/foo', { method: 'PUT' })).split('\n')[0]).toBe(
      `Mock dispatch not matched for method 'PUT' on path '/foo'${tail}`,
    );
    expect((await miss(agent, '/foo', { method: 'POST', body: 'bye' })).split('\n')[0]).toBe(
      `Mock dispatch not matched for body 'bye' on path '/foo'${tail}`,
    );
    expect((await miss(agent, '/foo', { method: 'POST', body: 'hello', headers: { 'x-a': 'c' } })).split('\n')[0]).toBe(
      `Mock dispatch not matched for headers '{"x-a":"c"}' on path '/foo'${tail}`,
    );
  });

  it('names the closest interceptor and its first differing field: method', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/users' }).reply(200);
    pool.intercept({ path: '/users', method: 'POST' }).reply(201);
    pool.intercept({ path: '/other', method: 'DELETE' }).reply(204);
    const lines = (await miss(agent, '/users', { method: 'PUT' })).split('\n');
    expect(lines[1]).toBe(`Closest interceptor: GET /users (on ${ORIGIN}, the 1st still active there)`);
    expect(lines[2]).toBe("First difference: method: expected 'GET', got 'PUT'");
  });

  it('prefers the interceptor that matches the longest prefix of path, method, body, headers', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/x', method: 'GET', body: 'nope' }).reply(200);
    pool.intercept({ path: '/x', method: 'POST', body: 'nope' }).reply(200);
    const lines = (await miss(agent, '/x', { method: 'POST', body: 'yes' })).split('\n');
    expect(lines[1]).toBe(`Closest interceptor: POST /x with body 'nope' (on ${ORIGIN}, the 2nd still active there)`);
    expect(lines[2]).toBe("First difference: body: expected 'nope', got 'yes'");
  });

  it('points out a trailing slash', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/api/items/' }).reply(200);
    expect((await miss(agent, '/api/items')).split('\n')[2]).toBe(
      "First difference: path: expected '/api/items/', got '/api/items' (only a trailing slash differs: pass ignoreTrailingSlash: true to accept both)",
    );
  });

  it('points out a differing query', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/search', query: { q: 'cats' } }).reply(200);
    expect((await miss(agent, '/search?q=dogs')).split('\n')[2]).toBe(
      "First difference: path: expected '/search?q=cats', got '/search?q=dogs' (the query differs; parameters are compared sorted by name)",
    );
  });

  it('names a missing header and a header that does not match', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/auth', headers: { Authorization: /^Bearer / } }).reply(200);
    expect((await miss(agent, '/auth')).split('\n')[2]).toBe(
      "First difference: header 'Authorization': expected /^Bearer /, but the request has no 'Authorization' header",
    );
    expect((await miss(agent, '/auth', { headers: { authorization: 'Basic x' } })).split('\n')[2]).toBe(
      "First difference: header 'Authorization': 'Basic x' does not match /^Bearer /",
    );
  });

  it('describes RegExp and function matchers', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: /^\/v2\//, method: 'GET' }).reply(200);
    expect((await miss(agent, '/v1/x')).split('\n').slice(1)).toEqual([
      `Closest interceptor: GET /^\\/v2\\// (on ${ORIGIN})`,
      "First difference: path: '/v1/x' does not match /^\\/v2\\//",
    ]);
    pool.cleanMocks();
    pool.intercept({ path: '/f', headers: function onlyJson(h) { return h['content-type'] === 'application/json'; } }).reply(200);
    expect((await miss(agent, '/f', { headers: { 'content-type': 'text/plain' } })).split('\n')[2]).toBe(
      'First difference: headers: the headers function returned false for {"content-type":"text/plain"}',
    );
    pool.cleanMocks();
    pool.intercept({ path: '/n', headers: { 'x-n': (v) => Number(v) > 1 } }).reply(200);
    expect((await miss(agent, '/n', { headers: { 'x-n': '1' } })).split('\n')[2]).toBe(
      "First difference: header 'x-n': its matcher function returned false for '1'",
    );
    pool.cleanMocks();
    pool.intercept({ path: '/m', method: (m) => m === 'PUT' }).reply(200);
    expect((await miss(agent, '/m')).split('\n')[2]).toBe("First difference: method: the method function returned false for 'GET'");
  });

  it('says when the matching interceptor was used up', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/once' }).reply(200, 'x');
    await text(agent, '/once');
    expect((await miss(agent, '/once')).split('\n')[1]).toBe(
      `The interceptor GET /once on ${ORIGIN} matches this request but was used up after 1 reply; use .times(n) or .persist() to reply more often.`,
    );
  });

  it('names the closest interceptor on another origin when this one has none', async () => {
    const { agent } = setup();
    agent.get('http://localhost:3001').intercept({ path: '/data' }).reply(200);
    expect((await miss(agent, '/data')).split('\n').slice(1)).toEqual([
      `No interceptors are registered for origin ${ORIGIN}.`,
      'Origins with interceptors: http://localhost:3001.',
      'Closest interceptor: GET /data (on http://localhost:3001)',
      `First difference: origin: expected 'http://localhost:3001', got '${ORIGIN}' (everything else matches)`,
    ]);
  });

  it('says so when no interceptor is registered anywhere', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    cleanup.push(() => agent.close());
    expect((await miss(agent, '/x')).split('\n').slice(1)).toEqual([`No interceptors are registered for origin ${ORIGIN}.`]);
  });

  it('says when every interceptor of the origin is used up', async () => {
    const { agent, pool } = setup();
    pool.intercept({ path: '/a' }).reply(200);
    await text(agent, '/a');
    expect((await miss(agent, '/b')).split('\n')[1]).toBe(`Every interceptor registered for ${ORIGIN} has been used up.`);
  });
});
