// The snapshot file: the format as the spec lists it, atomic saves, a stable order (re-recording the
// same traffic gives the same bytes), and clear errors for files that cannot be loaded.
import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errors } from '../ts/index.js';
import type { DispatchHandler } from '../ts/index.js';
import { SnapshotAgent } from '../ts/snapshot/snapshot-agent.js';
import type { SnapshotEntry } from '../ts/snapshot/snapshot-format.js';
import { BINARY, snapshotServer, tempDir, snapshotTestKit } from './fixtures/snapshot.js';

const { cleanup, agent, server } = snapshotTestKit();

function temp(): ReturnType<typeof tempDir> {
  const tmp = tempDir();
  cleanup.push(tmp.remove);
  return tmp;
}

async function get(a: SnapshotAgent, origin: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await a.request({ origin, path, method: 'GET', ...extra });
  return res.body.text();
}

const read = (file: string): SnapshotEntry[] => JSON.parse(readFileSync(file, 'utf8')) as SnapshotEntry[];

describe('file format', () => {
  it('is a JSON array of { hash, snapshot: { request, response, timestamp } } with exactly the listed fields', async () => {
    const s = await server();
    const file = temp().file();
    const a = agent({ snapshotPath: file });
    await get(a, s.origin, '/static?q=1', { method: 'POST', body: 'sent', headers: { 'x-one': '1' } });
    await get(a, s.origin, '/binary');
    await get(a, s.origin, '/trailers');
    await a.close();

    const entries = read(file);
    expect(Array.isArray(entries)).toBe(true);
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(Object.keys(entry)).toEqual(['hash', 'snapshot']);
      expect(entry.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.keys(entry.snapshot)).toEqual(['request', 'response', 'timestamp']);
      expect(Object.keys(entry.snapshot.response)).toEqual(['statusCode', 'headers', 'body', 'trailers']);
      expect(new Date(entry.snapshot.timestamp).toISOString()).toBe(entry.snapshot.timestamp);
    }
    const byUrl = new Map(entries.map((e) => [e.snapshot.request.url, e.snapshot]));
    const post = byUrl.get(`${s.origin}/static?q=1`)!;
    expect(post.request).toEqual({ method: 'POST', url: `${s.origin}/static?q=1`, headers: { 'x-one': '1' }, body: 'sent' });
    expect(Buffer.from(post.response.body, 'base64').toString()).toBe('static POST /static?q=1');
    // No body: the field is absent.
    expect(Object.keys(byUrl.get(`${s.origin}/binary`)!.request)).toEqual(['method', 'url', 'headers']);
    expect(Buffer.from(byUrl.get(`${s.origin}/binary`)!.response.body, 'base64').equals(BINARY)).toBe(true);
    expect(byUrl.get(`${s.origin}/trailers`)!.response.trailers).toEqual({ 'x-checksum': 'abc123' });
  });

  it('writes repeated identical requests as separate entries with the same hash, in recorded order', async () => {
    const s = await server();
    const file = temp().file();
    const a = agent({ snapshotPath: file });
    for (let i = 0; i < 3; i++) await get(a, s.origin, '/count');
    await a.close();
    const entries = read(file);
    expect(new Set(entries.map((e) => e.hash)).size).toBe(1);
    expect(entries.map((e) => JSON.parse(Buffer.from(e.snapshot.response.body, 'base64').toString()).n)).toEqual([1, 2, 3]);
  });
});

describe('saving', () => {
  it('writes a temporary file and renames it into place, leaving nothing behind', async () => {
    const s = await server();
    const tmp = temp();
    const file = join(tmp.dir, 'nested', 'dir', 'snapshots.json');
    const a = agent({ snapshotPath: file });
    await get(a, s.origin, '/static');
    await a.saveSnapshots();
    const first = statSync(file);
    await get(a, s.origin, '/static?again');
    await a.saveSnapshots();
    // A rename puts a new file (a new inode) in place; the old one is never written in place.
    expect(statSync(file).ino).not.toBe(first.ino);
    expect(readdirSync(join(tmp.dir, 'nested', 'dir'))).toEqual(['snapshots.json']);
    expect(read(file)).toHaveLength(2);
  });

  it('removes its temporary file when the write fails', async () => {
    const s = await server();
    const tmp = temp();
    const a = agent();
    await get(a, s.origin, '/static');
    mkdirSync(join(tmp.dir, 'taken'));
    // Renaming a file over a directory fails.
    await expect(a.saveSnapshots(join(tmp.dir, 'taken'))).rejects.toThrow(/Cannot write snapshot file/);
    expect(readdirSync(tmp.dir)).toEqual(['taken']);
  });

  it('re-recording the same traffic, in any order, gives the same file byte for byte', async () => {
    const s = await server();
    const file = temp().file();
    const paths = ['/static?b', '/binary', '/static?a', '/trailers'];
    const first = agent({ snapshotPath: file });
    for (const p of paths) await get(first, s.origin, p);
    await first.close();
    const text = readFileSync(file, 'utf8');
    const { ino } = statSync(file);

    const second = agent({ snapshotPath: file });
    await Promise.all([...paths].reverse().map((p) => get(second, s.origin, p)));
    await second.close();
    expect(readFileSync(file, 'utf8')).toBe(text);
    // Nothing changed, so nothing was written.
    expect(statSync(file).ino).toBe(ino);
  });

  it('orders entries by hash, whatever order they were recorded in', async () => {
    const s = await server();
    const file = temp().file();
    const a = agent({ snapshotPath: file });
    for (const p of ['/static?3', '/static?1', '/static?2', '/static?4']) await get(a, s.origin, p);
    await a.close();
    const hashes = read(file).map((e) => e.hash);
    expect(hashes).toEqual([...hashes].sort());
  });
});

describe('loading', () => {
  function collect(a: SnapshotAgent, origin: string): { returned: unknown; error: Promise<Error> } {
    let fail: (err: Error) => void = () => {};
    const error = new Promise<Error>((resolve) => (fail = resolve));
    const handler: DispatchHandler = {
      onResponseError: (_c, err) => fail(err),
      onResponseEnd: () => fail(new Error('unexpected success')),
    };
    const returned = a.dispatch({ origin, path: '/static', method: 'GET' }, handler);
    return { returned, error };
  }

  it('fails the first request (and later ones) with a clear error when the file is not JSON', async () => {
    const s = await server();
    const file = temp().file();
    writeFileSync(file, '[{"hash": "abc", ');
    const a = agent({ snapshotPath: file, mode: 'playback' });
    const first = collect(a, s.origin);
    expect(typeof first.returned).toBe('boolean');
    expect((await first.error).message).toMatch(new RegExp(`^Failed to load snapshots from ${file}: not valid JSON: `));
    await expect(get(a, s.origin, '/static')).rejects.toThrow(`Failed to load snapshots from ${file}: not valid JSON`);
    await expect(a.loadSnapshots()).rejects.toThrow('not valid JSON');
  });

  it('names the entry and the field of a malformed snapshot', async () => {
    const s = await server();
    const file = temp().file();
    const good = { method: 'GET', url: `${s.origin}/x`, headers: {} };
    const cases: [unknown, string][] = [
      [{}, 'expected a JSON array of { hash, snapshot } entries'],
      [[{ hash: 'x', snapshot: {} }], 'entry 0: snapshot.request must be an object'],
      [
        [{ hash: 'x', snapshot: { request: good, response: { statusCode: 'ok', headers: {}, body: '', trailers: {} }, timestamp: '2024-01-01T00:00:00.000Z' } }],
        'entry 0: snapshot.response.statusCode must be an integer from 100 to 999',
      ],
      [
        [{ hash: 'x', snapshot: { request: { ...good, headers: { a: 1 } }, response: { statusCode: 200, headers: {}, body: '', trailers: {} }, timestamp: '2024-01-01T00:00:00.000Z' } }],
        'entry 0: snapshot.request.headers.a must be a string or an array of strings',
      ],
      [
        [{ hash: 'x', snapshot: { request: good, response: { statusCode: 200, headers: {}, body: '', trailers: {} }, timestamp: 'yesterday' } }],
        'entry 0: snapshot.timestamp must be an ISO 8601 date',
      ],
    ];
    for (const [content, message] of cases) {
      writeFileSync(file, JSON.stringify(content));
      const a = agent({ snapshotPath: file, mode: 'playback' });
      await expect(get(a, s.origin, '/x'), message).rejects.toThrow(`Snapshot file ${file}: ${message}`);
      await expect(get(a, s.origin, '/x'), message).rejects.toBeInstanceOf(errors.InvalidArgumentError);
    }
  });

  it('fails with a clear error when the file cannot be read', async () => {
    const s = await server();
    const tmp = temp();
    const a = agent({ snapshotPath: tmp.dir, mode: 'update' });
    const { returned, error } = collect(a, s.origin);
    expect(returned).toBe(true);
    expect((await error).message).toMatch(new RegExp(`^Failed to load snapshots from ${tmp.dir}: `));
    expect(s.seen).toHaveLength(0);
  });

  it('says so when the playback file does not exist', async () => {
    const s = await server();
    const file = temp().file('missing.json');
    const a = agent({ snapshotPath: file, mode: 'playback' });
    await expect(get(a, s.origin, '/static')).rejects.toThrow(
      `No snapshot found for GET ${s.origin}/static (mode: playback)\nThe snapshot file ${file} does not exist`,
    );
  });

  it('a later loadSnapshots() of a good file clears the load error', async () => {
    const s = await server();
    const tmp = temp();
    const good = tmp.file('good.json');
    const recorder = agent({ snapshotPath: good });
    await get(recorder, s.origin, '/static');
    await recorder.close();
    const bad = tmp.file('bad.json');
    writeFileSync(bad, 'nope');
    const a = agent({ snapshotPath: bad, mode: 'playback' });
    await expect(get(a, s.origin, '/static')).rejects.toThrow('not valid JSON');
    await a.loadSnapshots(good);
    expect(await get(a, s.origin, '/static')).toBe('static GET /static');
  });
});
