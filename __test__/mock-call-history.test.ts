// Call history: enabling and disabling it on the agent, what a MockCallHistoryLog holds, and
// every way of reading and filtering the history.
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { errors } from '../ts/index.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { MockCallHistory, MockCallHistoryLog } from '../ts/mock/mock-call-history.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

function recordingAgent(): MockAgent {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  cleanup.push(() => agent.close());
  return agent;
}

async function send(
  agent: MockAgent,
  origin: string,
  path: string,
  init: { method?: string; body?: string | Readable; headers?: Record<string, string>; query?: Record<string, unknown> } = {},
): Promise<void> {
  const res = await agent.request({ origin, path, method: init.method ?? 'GET', ...init });
  await res.body.text();
}

/** An agent that has recorded four calls on three origins. */
async function withCalls(): Promise<MockCallHistory> {
  const agent = recordingAgent();
  agent.get('https://localhost:4000').intercept({ path: /.*/, method: /.*/ }).reply(200).persist();
  agent.get('http://localhost:3000').intercept({ path: /.*/, method: /.*/ }).reply(200).persist();
  agent.get('http://example.com').intercept({ path: /.*/, method: /.*/ }).reply(200).persist();
  await send(agent, 'https://localhost:4000', '/endpoint?query=value#here', {
    method: 'PUT',
    body: '{ "data": "hello" }',
    headers: { 'content-type': 'application/json' },
  });
  await send(agent, 'http://localhost:3000', '/api/v1/graphql', { method: 'POST', body: '{"errors": "wrong body"}' });
  await send(agent, 'http://example.com', '/', { query: { item: 1 } });
  await send(agent, 'http://localhost:3000', '/api/v1/graphql#hash');
  return agent.getCallHistory()!;
}

describe('call history on the agent', () => {
  it('is undefined until enabled, then records every request, matched or not', async () => {
    const real = await httpServer((_req: IncomingMessage, res) => res.end('real'));
    cleanup.push(() => real.close());
    const agent = new MockAgent();
    cleanup.push(() => agent.close());
    expect(agent.getCallHistory()).toBeUndefined();
    expect(agent.enableCallHistory()).toBe(agent);
    agent.get(real.origin).intercept({ path: '/mocked' }).reply(200, 'mock');
    await send(agent, real.origin, '/mocked');
    await send(agent, real.origin, '/live');
    expect(agent.getCallHistory()!.calls().map((c) => c.path)).toEqual(['/mocked', '/live']);
  });

  it('stops recording when disabled and keeps what it has', async () => {
    const agent = recordingAgent();
    agent.get('http://a.test').intercept({ path: /.*/ }).reply(200).persist();
    await send(agent, 'http://a.test', '/1');
    expect(agent.disableCallHistory()).toBe(agent);
    await send(agent, 'http://a.test', '/2');
    agent.enableCallHistory();
    await send(agent, 'http://a.test', '/3');
    expect(agent.getCallHistory()!.calls().map((c) => c.path)).toEqual(['/1', '/3']);
  });

  it('clearCallHistory() and close() empty it', async () => {
    const agent = recordingAgent();
    agent.get('http://a.test').intercept({ path: /.*/ }).reply(200).persist();
    await send(agent, 'http://a.test', '/1');
    agent.clearCallHistory();
    expect(agent.getCallHistory()!.calls()).toEqual([]);
    await send(agent, 'http://a.test', '/2');
    const history = agent.getCallHistory()!;
    await agent.close();
    expect(history.calls()).toEqual([]);
    new MockAgent().clearCallHistory();
  });

  it('records calls made on a pool directly, and a streamed body once read', async () => {
    const agent = recordingAgent();
    const pool = agent.get('http://a.test');
    pool.intercept({ path: '/p', method: 'POST' }).reply(200);
    const res = await pool.request({ path: '/p', method: 'POST', body: Readable.from(['stre', 'amed']) });
    await res.body.text();
    const log = agent.getCallHistory()!.lastCall()!;
    expect(log.origin).toBe('http://a.test');
    expect(log.body).toBe('streamed');
  });
});

describe('MockCallHistoryLog', () => {
  it('splits the URL into its parts', async () => {
    const history = await withCalls();
    const log = history.firstCall()!;
    expect(log).toBeInstanceOf(MockCallHistoryLog);
    expect({ ...log }).toEqual({
      protocol: 'https:',
      host: 'localhost:4000',
      port: '4000',
      origin: 'https://localhost:4000',
      path: '/endpoint',
      hash: '#here',
      fullUrl: 'https://localhost:4000/endpoint?query=value#here',
      method: 'PUT',
      searchParams: { query: 'value' },
      body: '{ "data": "hello" }',
      headers: { 'content-type': 'application/json' },
    });
  });

  it('merges the query option and leaves absent parts empty', async () => {
    const history = await withCalls();
    expect(history.nthCall(3)).toMatchObject({
      body: undefined,
      headers: undefined,
      method: 'GET',
      origin: 'http://example.com',
      fullUrl: 'http://example.com/?item=1',
      path: '/',
      searchParams: { item: '1' },
      protocol: 'http:',
      host: 'example.com',
      port: '',
      hash: '',
    });
  });

  it('toMap() and toString()', async () => {
    const log = (await withCalls()).firstCall()!;
    const map = log.toMap();
    expect([...map.keys()]).toEqual([
      'protocol', 'host', 'port', 'origin', 'path', 'hash', 'searchParams', 'fullUrl', 'method', 'body', 'headers',
    ]);
    expect(map.get('hash')).toBe('#here');
    expect(log.toString()).toBe(
      'protocol->https:|host->localhost:4000|port->4000|origin->https://localhost:4000|path->/endpoint|hash->#here|' +
        'searchParams->{"query":"value"}|fullUrl->https://localhost:4000/endpoint?query=value#here|method->PUT|' +
        'body->"{ "data": "hello" }"|headers->{"content-type":"application/json"}',
    );
  });

  it('can be built from dispatch options, and refuses ones without a URL', () => {
    const log = new MockCallHistoryLog({ origin: 'http://h.test:81', path: '/p?a=1&a=2', method: 'HEAD', headers: ['X-A', '1'] });
    expect(log).toMatchObject({ host: 'h.test:81', port: '81', searchParams: { a: '2' }, method: 'HEAD', headers: ['X-A', '1'] });
    expect(() => new MockCallHistoryLog({ path: '/relative', method: 'GET' })).toThrow(errors.InvalidArgumentError);
  });
});

describe('MockCallHistory', () => {
  it('calls, firstCall, lastCall, nthCall and iteration', async () => {
    const history = await withCalls();
    const all = history.calls();
    expect(all).toHaveLength(4);
    expect(history.firstCall()).toBe(all[0]);
    expect(history.lastCall()).toBe(all[3]);
    expect(history.nthCall(2)).toBe(all[1]);
    expect(history.nthCall(5)).toBeUndefined();
    expect([...history]).toEqual(all);
    const seen: MockCallHistoryLog[] = [];
    for (const log of history) seen.push(log);
    expect(seen).toEqual(all);
    expect(new Set(history).size).toBe(4);
  });

  it('nthCall validates its position', async () => {
    const history = await withCalls();
    expect(() => history.nthCall('1' as unknown as number)).toThrow('nthCall must be called with a number');
    expect(() => history.nthCall(1.5)).toThrow('nthCall must be called with an integer');
    expect(() => history.nthCall(0)).toThrow(
      'nthCall must be called with a positive value. use firstCall or lastCall instead',
    );
    expect(() => history.nthCall(-1)).toThrow(errors.InvalidArgumentError);
  });

  it('filterCalls with a function and with a RegExp over toString()', async () => {
    const history = await withCalls();
    expect(history.filterCalls((log) => log.hash === '#hash').map((l) => l.fullUrl)).toEqual([
      'http://localhost:3000/api/v1/graphql#hash',
    ]);
    expect(history.filterCalls(/"errors": "wrong body"/).map((l) => l.method)).toEqual(['POST']);
  });

  it('filterCalls with criteria, OR by default, AND on request, case-insensitive', async () => {
    const history = await withCalls();
    const or = history.filterCalls({ hash: /here/, path: '/api/v1/graphql' });
    expect(or.map((l) => l.fullUrl)).toEqual([
      'https://localhost:4000/endpoint?query=value#here',
      'http://localhost:3000/api/v1/graphql',
      'http://localhost:3000/api/v1/graphql#hash',
    ]);
    const and = history.filterCalls({ path: '/api/v1/graphql', method: 'POST' }, { operator: 'AND' });
    expect(and.map((l) => l.method)).toEqual(['POST']);
    expect(history.filterCalls({ path: '/api/v1/graphql', method: 'POST' }, { operator: 'and' })).toEqual(and);
    expect(history.filterCalls({})).toHaveLength(4);
    expect(history.filterCalls({ body: undefined }).map((l) => l.origin)).toEqual([
      'http://example.com',
      'http://localhost:3000',
    ]);
  });

  it('filterCalls rejects bad criteria and operators', async () => {
    const history = await withCalls();
    expect(() => history.filterCalls('x' as unknown as RegExp)).toThrow(
      'filterCalls(criteria): criteria must be a function, a RegExp or an object of field criteria',
    );
    expect(() => history.filterCalls({ path: '/' }, { operator: 'XOR' as 'OR' })).toThrow(
      `filterCalls(criteria, options): options.operator must be 'OR' or 'AND', got "XOR"`,
    );
    expect(() => history.filterCalls({ pth: '/' })).toThrow(
      "filterCalls(criteria): unknown field 'pth'; fields are protocol, host, port, origin, path, hash, searchParams, fullUrl, method, body, headers",
    );
    expect(() => history.filterCalls({ path: 5 as unknown as string })).toThrow(
      'filterCalls(criteria): criteria.path: expected a string, a RegExp, null or undefined, got number',
    );
  });

  it('filterCallsBy* for each field, strings exact, RegExps tested', async () => {
    const history = await withCalls();
    const urls = (logs: MockCallHistoryLog[]): string[] => logs.map((l) => l.fullUrl);
    expect(urls(history.filterCallsByProtocol('https:'))).toEqual(['https://localhost:4000/endpoint?query=value#here']);
    expect(history.filterCallsByProtocol(/http/)).toHaveLength(4);
    expect(history.filterCallsByHost('localhost:3000')).toHaveLength(2);
    expect(history.filterCallsByHost('localhost')).toHaveLength(0);
    expect(history.filterCallsByPort('')).toHaveLength(1);
    expect(history.filterCallsByPort(/^\d+$/)).toHaveLength(3);
    expect(history.filterCallsByOrigin('http://example.com')).toHaveLength(1);
    expect(history.filterCallsByPath('/api/v1/graphql')).toHaveLength(2);
    expect(history.filterCallsByHash('#hash')).toHaveLength(1);
    expect(history.filterCallsByFullUrl(/\?item=1$/)).toHaveLength(1);
    expect(history.filterCallsByMethod('POST')).toHaveLength(1);
    expect(history.filterCallsByMethod(/^(PUT|POST)$/)).toHaveLength(2);
    expect(() => history.filterCallsByMethod(1 as unknown as string)).toThrow(
      'filterCallsByMethod(criteria): expected a string, a RegExp, null or undefined, got number',
    );
  });

  it('clear() forgets everything', async () => {
    const history = await withCalls();
    history.clear();
    expect(history.calls()).toEqual([]);
    expect(history.firstCall()).toBeUndefined();
  });
});
