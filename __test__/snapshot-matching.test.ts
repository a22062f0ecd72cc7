// Which requests a snapshot answers: every matching option, URL exclusion, the should* hooks, the
// canonical hash, and the closest-snapshot diagnosis of a playback miss.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RequestOptions } from '../ts/index.js';
import { SnapshotAgent } from '../ts/snapshot/snapshot-agent.js';
import type { SnapshotRequest } from '../ts/snapshot/snapshot-format.js';
import { canonicalJson, snapshotHash, snapshotKey, type SnapshotMatchOptions } from '../ts/snapshot/snapshot-key.js';
import { snapshotServer, snapshotTestKit } from './fixtures/snapshot.js';

const { cleanup, agent, server } = snapshotTestKit();

type Req = Partial<RequestOptions>;

async function send(a: SnapshotAgent, origin: string, req: Req): Promise<string> {
  const res = await a.request({ origin, path: '/count', method: 'GET', ...req } as RequestOptions);
  return res.body.text();
}

/**
 * Records `first` in update mode, then sends `second`: true when `second` was answered from
 * the snapshot of `first` (the server saw one request), false when it was recorded anew.
 */
async function matches(options: SnapshotAgent.Options, first: Req, second: Req): Promise<boolean> {
  const s = await server();
  const a = agent({ ...options, mode: 'update' });
  await send(a, s.origin, first);
  await send(a, s.origin, second);
  return s.seen.length === 1;
}

describe('matching options', () => {
  it('match all headers by default', async () => {
    expect(await matches({}, { headers: { 'x-a': '1' } }, { headers: { 'x-a': '1' } })).toBe(true);
    expect(await matches({}, { headers: { 'x-a': '1' } }, { headers: { 'x-a': '2' } })).toBe(false);
    expect(await matches({}, { headers: { 'x-a': '1' } }, { headers: { 'x-a': '1', 'x-b': '1' } })).toBe(false);
  });

  it('matchHeaders: only the listed headers count', async () => {
    const options = { matchHeaders: ['X-A'] };
    expect(await matches(options, { headers: { 'x-a': '1', 'x-b': '1' } }, { headers: { 'x-a': '1', 'x-b': '2' } })).toBe(true);
    expect(await matches(options, { headers: { 'x-a': '1' } }, { headers: { 'x-a': '2' } })).toBe(false);
  });

  it('ignoreHeaders: left out of matching, still stored', async () => {
    const options = { ignoreHeaders: ['x-request-id'] };
    expect(await matches(options, { headers: { 'x-request-id': 'a' } }, { headers: { 'x-request-id': 'b' } })).toBe(true);
    const s = await server();
    const a = agent(options);
    await send(a, s.origin, { headers: { 'x-request-id': 'a' } });
    expect(a.getRecorder().getSnapshots()[0]!.request.headers).toEqual({ 'x-request-id': 'a' });
  });

  it('excludeHeaders: neither stored (request and response) nor matched, whatever caseSensitive says', async () => {
    for (const caseSensitive of [false, true]) {
      const options = { excludeHeaders: ['X-Trace', 'CONTENT-TYPE'], caseSensitive };
      expect(await matches(options, { headers: { 'x-trace': '1' } }, { headers: { 'x-trace': '2' } })).toBe(true);
      const s = await server();
      const a = agent(options);
      await send(a, s.origin, { headers: ['X-TRACE', '1', 'x-kept', 'yes'] });
      const [record] = a.getRecorder().getSnapshots();
      expect(record!.request.headers).toEqual({ 'x-kept': 'yes' });
      expect(record!.responses[0]!.headers).not.toHaveProperty('content-type');
      expect(record!.responses[0]!.headers).toHaveProperty('content-length');
    }
  });

  it('matchBody: true by default; false ignores the body', async () => {
    const post = (body: string): Req => ({ method: 'POST', body });
    expect(await matches({}, post('a'), post('b'))).toBe(false);
    expect(await matches({ matchBody: false }, post('a'), post('b'))).toBe(true);
  });

  it('normalizeBody: requests match when their normalized bodies are identical', async () => {
    const seen: unknown[] = [];
    const normalizeBody = (body: string | Buffer | null | undefined): string => {
      seen.push(body);
      const parsed = JSON.parse(String(body)) as Record<string, unknown>;
      delete parsed.sentAt;
      return canonicalJson(parsed);
    };
    const post = (value: object): Req => ({ method: 'POST', body: JSON.stringify(value) });
    expect(await matches({ normalizeBody }, post({ a: 1, sentAt: 1 }), post({ sentAt: 2, a: 1 }))).toBe(true);
    expect(await matches({ normalizeBody }, post({ a: 1 }), post({ a: 2 }))).toBe(false);
    expect(seen.every((b) => typeof b === 'string')).toBe(true);
    // Only used when matchBody is true.
    expect(await matches({ normalizeBody, matchBody: false }, post({ a: 1 }), { method: 'POST', body: 'not json' })).toBe(true);
  });

  it('normalizeBody gets bytes that are not UTF-8 as a Buffer, and must return a string', async () => {
    let got: unknown;
    const normalizeBody = (body: string | Buffer | null | undefined): string => {
      got = body;
      return 'same';
    };
    const bytes = Buffer.from([0xff, 0xfe, 0x00]);
    expect(await matches({ normalizeBody }, { method: 'POST', body: bytes }, { method: 'POST', body: 'x' })).toBe(true);
    const s = await server();
    const a = agent({ normalizeBody });
    await send(a, s.origin, { method: 'POST', body: bytes });
    expect(Buffer.isBuffer(got) && got.equals(bytes)).toBe(true);
    const b = agent({ normalizeBody: (() => 42) as unknown as () => string });
    await expect(send(b, s.origin, { method: 'POST', body: 'x' })).rejects.toThrow('normalizeBody must return a string, got number');
  });

  it('matchQuery: true by default (parameter order aside); false ignores the query', async () => {
    expect(await matches({}, { path: '/count?a=1&b=2' }, { path: '/count?b=2&a=1' })).toBe(true);
    expect(await matches({}, { path: '/count?a=1' }, { path: '/count?a=2' })).toBe(false);
    expect(await matches({}, { path: '/count', query: { a: '1' } }, { path: '/count?a=1' })).toBe(true);
    expect(await matches({ matchQuery: false }, { path: '/count?a=1' }, { path: '/count?a=2' })).toBe(true);
  });

  it('normalizeQuery: requests match when their normalized queries are identical', async () => {
    const normalizeQuery = (query: URLSearchParams): string => {
      query.delete('cacheBust');
      return query.toString();
    };
    expect(await matches({ normalizeQuery }, { path: '/count?id=1&cacheBust=1' }, { path: '/count?id=1&cacheBust=2' })).toBe(true);
    expect(await matches({ normalizeQuery }, { path: '/count?id=1' }, { path: '/count?id=2' })).toBe(false);
    expect(await matches({ normalizeQuery, matchQuery: false }, { path: '/count?id=1' }, { path: '/count?id=2' })).toBe(true);
  });

  it('caseSensitive: false by default; true tells header names apart by case', async () => {
    const upper = { headers: ['X-Token', 'a'] };
    const lower = { headers: ['x-token', 'a'] };
    expect(await matches({}, upper, lower)).toBe(true);
    expect(await matches({ caseSensitive: true }, upper, lower)).toBe(false);
    expect(await matches({ caseSensitive: true }, upper, upper)).toBe(true);
    // The name lists follow the same rule.
    expect(await matches({ caseSensitive: true, ignoreHeaders: ['x-token'] }, { headers: ['X-Token', 'a'] }, { headers: ['X-Token', 'b'] })).toBe(false);
    expect(await matches({ ignoreHeaders: ['x-token'] }, { headers: ['X-Token', 'a'] }, { headers: ['X-Token', 'b'] })).toBe(true);
  });
});

describe('what is recorded and played back', () => {
  it('shouldRecord decides per request, given origin, path, method and body', async () => {
    const s = await server();
    const calls: SnapshotAgent.RequestInfo[] = [];
    const a = agent({
      shouldRecord: (opts) => {
        calls.push(opts);
        return !opts.path.startsWith('/skip');
      },
    });
    await send(a, s.origin, { path: '/keep' });
    expect(await send(a, s.origin, { path: '/skip', method: 'POST', body: 'b' })).toContain('"url":"/skip"');
    expect(a.getRecorder().getSnapshots().map((r) => r.request.url)).toEqual([`${s.origin}/keep`]);
    expect(calls[1]).toMatchObject({ origin: s.origin, path: '/skip', method: 'POST', body: 'b' });
    expect(s.seen).toHaveLength(2);
  });

  it('shouldPlayback in playback mode: a request it refuses is a miss, never a network request (undici 8.13)', async () => {
    const s = await server();
    const a = agent({ mode: 'playback', shouldPlayback: (opts) => opts.path !== '/live' });
    a.replaceSnapshots([]);
    await expect(send(a, s.origin, { path: '/count' })).rejects.toThrow('No snapshot found');
    await expect(send(a, s.origin, { path: '/live' })).rejects.toThrow('No snapshot found');
    const b = agent({ mode: 'playback', shouldPlayback: () => false });
    b.get(s.origin).intercept({ path: '/mocked' }).reply(200, 'from an interceptor');
    await expect(send(b, s.origin, { path: '/mocked' })).rejects.toThrow('No snapshot found');
    expect(s.seen).toHaveLength(0);
  });

  it('shouldPlayback in update mode: refused requests are recorded afresh', async () => {
    expect(await matches({ shouldPlayback: () => false }, {}, {})).toBe(false);
    expect(await matches({ shouldRecord: () => false }, {}, {})).toBe(false);
  });

  it('excludeUrls: strings match as a prefix or a substring, RegExps as they say', async () => {
    const s = await server();
    const a = agent({ excludeUrls: [`${s.origin}/health`, 'secret-area', /\/metrics\/\d+$/] });
    for (const path of ['/health/live', '/a/secret-area/b', '/metrics/12', '/metrics/12/x', '/kept']) await send(a, s.origin, { path });
    expect(a.getRecorder().getSnapshots().map((r) => new URL(r.request.url).pathname)).toEqual(['/metrics/12/x', '/kept']);

    // Nor are they played back: they reach the network.
    const player = agent({ mode: 'playback', excludeUrls: ['/health'] });
    player.replaceSnapshots(a.getRecorder().getEntries());
    const before = s.seen.length;
    await send(player, s.origin, { path: '/health' });
    await send(player, s.origin, { path: '/kept' });
    expect(s.seen.length).toBe(before + 1);
  });
});

describe('the hash', () => {
  const options: SnapshotMatchOptions = {
    excludeHeaders: new Set(),
    redactSecrets: true,
    matchBody: true,
    matchQuery: true,
    caseSensitive: false,
  };
  const req = (headers: SnapshotRequest['headers'], body?: string): SnapshotRequest => ({
    method: 'GET',
    url: 'http://example.test/a',
    headers,
    ...(body === undefined ? {} : { body }),
  });

  it('is sha256 over canonical JSON of the matched parts', () => {
    const r = req({ 'x-b': '2', 'X-A': ['1', '2'] }, 'body');
    const key = snapshotKey(r, options);
    expect(key).toEqual({
      method: 'GET',
      origin: 'http://example.test',
      pathname: '/a',
      query: '',
      headers: [
        ['x-a', ['1', '2']],
        ['x-b', ['2']],
      ],
      body: { text: 'body' },
    });
    expect(snapshotHash(key)).toBe(createHash('sha256').update(canonicalJson(key)).digest('hex'));
  });

  it('cannot be forged by a header value that spells other headers or a body', () => {
    const hash = (r: SnapshotRequest): string => snapshotHash(snapshotKey(r, options));
    const honest = hash(req({ 'x-a': '1', 'x-b': '2' }));
    expect(hash(req({ 'x-a': '1", "x-b": "2' }))).not.toBe(honest);
    expect(hash(req({ 'x-a': '1\nx-b: 2' }))).not.toBe(honest);
    expect(hash(req({ 'x-a': '1,2' }))).not.toBe(hash(req({ 'x-a': ['1', '2'] })));
    expect(hash(req({ 'x-a': '1' }, 'x'))).not.toBe(hash(req({ 'x-a': '1x' })));
    expect(hash(req({}, '{"base64":"eA=="}'))).not.toBe(hash({ ...req({}, 'eA=='), bodyEncoding: 'base64' }));
  });

  it('a forged header does not reach another request\'s snapshot in playback', async () => {
    const s = await server();
    const a = agent({ mode: 'update' });
    await send(a, s.origin, { headers: { 'x-a': '1', 'x-b': '2' } });
    await send(a, s.origin, { headers: { 'x-a': '1", "x-b": "2' } });
    expect(s.seen).toHaveLength(2);
  });
});

describe('a playback miss', () => {
  async function missFor(recorded: Req[], request: Req): Promise<{ message: string; origin: string }> {
    const s = await server();
    const recorder = agent();
    for (const r of recorded) await send(recorder, s.origin, r);
    const player = agent({ mode: 'playback' });
    player.replaceSnapshots(recorder.getRecorder().getEntries());
    const err = await send(player, s.origin, request).then(
      () => new Error('no miss'),
      (e: Error) => e,
    );
    return { message: err.message, origin: s.origin };
  }

  it('names the closest recorded request and the first header that differs', async () => {
    const { message, origin } = await missFor(
      [{ path: '/users?page=1', headers: { 'x-api-version': '1' } }, { path: '/orders' }],
      { path: '/users?page=1', headers: { 'x-api-version': '2' } },
    );
    expect(message).toMatch(/^No snapshot found for GET .*\/users\?page=1 \(mode: playback\)\n/);
    expect(message).toContain(`Closest recorded request: GET ${origin}/users?page=1 (recorded `);
    expect(message).toContain('First difference: header "x-api-version": recorded "1", request has "2"');
  });

  it('names a differing method, query, missing header or body', async () => {
    expect((await missFor([{ path: '/a' }], { path: '/a', method: 'DELETE' })).message).toContain(
      'First difference: method: recorded "GET", request has "DELETE"',
    );
    expect((await missFor([{ path: '/a?x=1' }, { path: '/b' }], { path: '/a?x=2' })).message).toContain(
      'First difference: query: recorded "x=1", request has "x=2"',
    );
    expect((await missFor([{ path: '/a' }], { path: '/a', headers: { 'x-new': 'v' } })).message).toContain(
      'First difference: header "x-new": the request has "v", the recording has none',
    );
    expect(
      (await missFor([{ path: '/a', method: 'POST', body: '{"id":1,"name":"ann"}' }], { path: '/a', method: 'POST', body: '{"id":1,"name":"bob"}' }))
        .message,
    ).toContain('First difference: body differs at character 16: recorded "{\\"id\\":1,\\"name\\":\\"ann\\"}", request has "{\\"id\\":1,\\"name\\":\\"bob\\"}"');
  });

  it('says when nothing is recorded at all', async () => {
    expect((await missFor([], { path: '/a' })).message).toContain('No snapshots are recorded.');
  });
});
