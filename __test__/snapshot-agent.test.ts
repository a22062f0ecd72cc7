// SnapshotAgent: options, the three modes, the operations, and record → server stopped → playback
// through every API with identical results (against a real local server).
import { describe, expect, it } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { Dispatcher, errors } from '../ts/index.js';
import { fetch } from '../ts/fetch/fetch.js';
import { getGlobalDispatcher, setGlobalDispatcher } from '../ts/dispatcher/global.js';
import { request } from '../ts/api/shortcuts.js';
import { MockAgent } from '../ts/mock/mock-agent.js';
import { SnapshotAgent } from '../ts/snapshot/snapshot-agent.js';
import { SnapshotRecorder } from '../ts/snapshot/snapshot-recorder.js';
import type { SnapshotEntry } from '../ts/snapshot/snapshot-format.js';
import { BIG, BINARY, snapshotServer, tempDir, snapshotTestKit } from './fixtures/snapshot.js';
import { APIS, type Outcome } from './fixtures/snapshot-apis.js';

const { cleanup, agent, server, snapshotFile } = snapshotTestKit();

async function text(d: Dispatcher, origin: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await d.request({ origin, path, method: 'GET', ...extra });
  return res.body.text();
}

describe('new SnapshotAgent(options)', () => {
  it('is a MockAgent and a Dispatcher, in record mode by default', () => {
    const a = agent();
    expect(a).toBeInstanceOf(MockAgent);
    expect(a).toBeInstanceOf(Dispatcher);
    expect(a.getMode()).toBe('record');
    expect(agent({ mode: 'playback' }).getMode()).toBe('playback');
    expect(agent({ mode: 'update' }).getMode()).toBe('update');
  });

  it('rejects an unknown mode, naming the valid ones', () => {
    const make = (): SnapshotAgent => new SnapshotAgent({ mode: 'replay' as SnapshotAgent.Mode });
    expect(make).toThrow(errors.InvalidArgumentError);
    expect(make).toThrow('Invalid snapshot mode: replay. Must be one of: record, playback, update');
  });

  it('checks every option it takes', () => {
    const bad: [SnapshotAgent.Options, string][] = [
      [{ snapshotPath: '' }, 'options.snapshotPath must be a non-empty string'],
      [{ maxSnapshots: 0 }, 'options.maxSnapshots must be a positive integer or Infinity'],
      [{ maxSnapshots: 1.5 }, 'options.maxSnapshots must be a positive integer or Infinity'],
      [{ flushInterval: -1 }, 'options.flushInterval must be a positive number of milliseconds'],
      [{ autoFlush: true }, 'options.autoFlush needs options.snapshotPath'],
      [{ autoFlush: 'yes' as unknown as boolean }, 'options.autoFlush must be a boolean, got string'],
      [{ matchHeaders: 'x-a' as unknown as string[] }, 'options.matchHeaders must be an array of header names'],
      [{ ignoreHeaders: [1] as unknown as string[] }, 'options.ignoreHeaders must be an array of header names'],
      [{ excludeHeaders: {} as unknown as string[] }, 'options.excludeHeaders must be an array of header names'],
      [{ matchBody: 1 as unknown as boolean }, 'options.matchBody must be a boolean, got number'],
      [{ matchQuery: null as unknown as boolean }, 'options.matchQuery must be a boolean, got null'],
      [{ caseSensitive: 'no' as unknown as boolean }, 'options.caseSensitive must be a boolean, got string'],
      [{ redactSecrets: 0 as unknown as boolean }, 'options.redactSecrets must be a boolean, got number'],
      [{ normalizeBody: 'x' as unknown as () => string }, 'options.normalizeBody must be a function, got string'],
      [{ normalizeQuery: {} as unknown as () => string }, 'options.normalizeQuery must be a function, got object'],
      [{ shouldRecord: true as unknown as () => boolean }, 'options.shouldRecord must be a function, got boolean'],
      [{ shouldPlayback: [] as unknown as () => boolean }, 'options.shouldPlayback must be a function, got array'],
      [{ excludeUrls: [1] as unknown as string[] }, 'options.excludeUrls must be an array of strings and RegExps'],
    ];
    for (const [options, message] of bad) {
      expect(() => new SnapshotAgent(options), JSON.stringify(options)).toThrow(errors.InvalidArgumentError);
      expect(() => new SnapshotAgent(options), JSON.stringify(options)).toThrow(message);
    }
    expect(() => new SnapshotAgent('x' as unknown as SnapshotAgent.Options)).toThrow('SnapshotAgent options must be an object');
  });

  it('accepts the MockAgent options too (call history covers snapshot traffic)', async () => {
    const s = await server();
    const a = agent({ enableCallHistory: true, connections: 2 });
    await text(a, s.origin, '/static');
    expect(a.getCallHistory()?.calls().map((c) => c.path)).toEqual(['/static']);
  });

  it('passes flushInterval and autoFlush through without keeping the process alive', () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    agent({ snapshotPath: snapshotFile(), autoFlush: true, flushInterval: 10 });
    expect(timers()).toBe(before);
  });
});

describe('record, stop the server, play back', () => {
  for (const path of ['/static', '/binary', '/trailers', '/big', '/status']) {
    it(`gives identical results through every API for ${path}`, async () => {
      const s = await server();
      const file = snapshotFile();
      const recorder = agent({ snapshotPath: file });
      const recorded: Record<string, Outcome> = {};
      for (const [name, api] of Object.entries(APIS)) recorded[name] = await api(recorder, s.origin, path);
      await recorder.close();
      await s.close();
      if (path === '/trailers') expect(recorded.request!.trailers).toEqual({ 'x-checksum': 'abc123' });
      if (path === '/binary') expect(recorded.stream!.body).toBe(BINARY.toString('base64'));
      if (path === '/big') expect(Buffer.from(recorded.fetch!.body, 'base64').equals(BIG)).toBe(true);

      const player = agent({ snapshotPath: file, mode: 'playback' });
      for (const [name, api] of Object.entries(APIS)) {
        expect(await api(player, s.origin, path), name).toEqual(recorded[name]);
      }
    });
  }

  it('works as the global dispatcher, for fetch and the request shortcut', async () => {
    const s = await server();
    const file = snapshotFile();
    const previous = getGlobalDispatcher();
    cleanup.push(() => setGlobalDispatcher(previous));
    const recorder = agent({ snapshotPath: file });
    setGlobalDispatcher(recorder);
    const live = await (await fetch(`${s.origin}/static`)).text();
    const liveShortcut = await (await request(`${s.origin}/static?via=shortcut`)).body.text();
    await recorder.close();
    await s.close();

    setGlobalDispatcher(agent({ snapshotPath: file, mode: 'playback' }));
    expect(await (await fetch(`${s.origin}/static`)).text()).toBe(live);
    expect(await (await request(`${s.origin}/static?via=shortcut`)).body.text()).toBe(liveShortcut);
  });
});

describe('record mode', () => {
  it('sends every request to the server and records repeats as separate responses', async () => {
    const s = await server();
    const a = agent();
    const first = JSON.parse(await text(a, s.origin, '/count'));
    const second = JSON.parse(await text(a, s.origin, '/count'));
    expect([first.n, second.n]).toEqual([1, 2]);
    expect(s.seen).toHaveLength(2);
    // One snapshot for the request (undici's shape), its two responses in order.
    const snapshots = a.getRecorder().getSnapshots();
    expect(snapshots).toHaveLength(1);
    expect(a.getRecorder().size()).toBe(1);
    expect(snapshots[0]!.responses.map((r) => JSON.parse(Buffer.from(r.body, 'base64').toString()).n)).toEqual([1, 2]);
  });

  it('throws network errors to the caller and records nothing', async () => {
    const s = await server();
    const a = agent();
    await expect(text(a, s.origin, '/drop')).rejects.toMatchObject({ name: 'SocketError', code: 'UND_ERR_SOCKET' });
    const closedOrigin = s.origin;
    await s.close();
    await expect(text(a, closedOrigin, '/static')).rejects.toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect' });
    expect(a.getRecorder().size()).toBe(0);
  });

  it('does not load the snapshot file, and close() replaces it with what was recorded', async () => {
    const s = await server();
    const file = snapshotFile();
    writeFileSync(file, '[]');
    const a = agent({ snapshotPath: file });
    await text(a, s.origin, '/static');
    await a.close();
    const entries = JSON.parse(readFileSync(file, 'utf8')) as SnapshotEntry[];
    expect(entries.map((e) => e.snapshot.request.url)).toEqual([`${s.origin}/static`]);
  });
});

describe('playback mode', () => {
  it('makes no real request; repeats follow the recorded order, then the last repeats', async () => {
    const s = await server();
    const file = snapshotFile();
    const recorder = agent({ snapshotPath: file });
    for (let i = 0; i < 3; i++) await text(recorder, s.origin, '/count');
    await recorder.close();
    const hits = s.seen.length;

    const player = agent({ snapshotPath: file, mode: 'playback' });
    const ns: number[] = [];
    for (let i = 0; i < 5; i++) ns.push(JSON.parse(await text(player, s.origin, '/count')).n);
    expect(ns).toEqual([1, 2, 3, 3, 3]);
    expect(s.seen).toHaveLength(hits);
  });

  it('fails a request with no snapshot with "No snapshot found", through request, fetch and dispatch', async () => {
    const s = await server();
    const player = agent({ mode: 'playback' });
    await expect(text(player, s.origin, '/nothing')).rejects.toThrow(`No snapshot found for GET ${s.origin}/nothing`);
    await expect(text(player, s.origin, '/nothing')).rejects.toBeInstanceOf(errors.MockNotMatchedError);
    const failed = await fetch(`${s.origin}/nothing`, { dispatcher: player }).catch((e: Error) => e);
    expect(String((failed as Error & { cause?: Error }).cause)).toContain('No snapshot found');
    expect(s.seen).toHaveLength(0);
  });

  it('never writes the snapshot file, not even on close()', async () => {
    const s = await server();
    const file = snapshotFile();
    const recorder = agent({ snapshotPath: file });
    await text(recorder, s.origin, '/static');
    await recorder.close();
    const before = statSync(file);
    const content = readFileSync(file, 'utf8');

    const player = agent({ snapshotPath: file, mode: 'playback', autoFlush: true, flushInterval: 1 });
    await text(player, s.origin, '/static');
    player.clearSnapshots();
    await player.close();
    const after = statSync(file);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });
});

describe('update mode', () => {
  it('plays back what it has, records what it lacks, and saves both on close()', async () => {
    const s = await server();
    const file = snapshotFile();
    const recorder = agent({ snapshotPath: file });
    const known = await text(recorder, s.origin, '/count?known');
    await recorder.close();
    expect(s.seen).toHaveLength(1);

    const updater = agent({ snapshotPath: file, mode: 'update' });
    expect(await text(updater, s.origin, '/count?known')).toBe(known);
    expect(s.seen).toHaveLength(1);
    const fresh = await text(updater, s.origin, '/count?new');
    expect(s.seen).toHaveLength(2);
    // Recorded now, so it is played back from here on.
    expect(await text(updater, s.origin, '/count?new')).toBe(fresh);
    expect(s.seen).toHaveLength(2);
    await updater.close();
    const urls = (JSON.parse(readFileSync(file, 'utf8')) as SnapshotEntry[]).map((e) => e.snapshot.request.url).sort();
    expect(urls).toEqual([`${s.origin}/count?known`, `${s.origin}/count?new`]);
  });

  it('starts from nothing when the snapshot file does not exist yet', async () => {
    const s = await server();
    const file = snapshotFile();
    const updater = agent({ snapshotPath: file, mode: 'update' });
    await text(updater, s.origin, '/static');
    await updater.close();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveLength(1);
  });
});

describe('operations', () => {
  it('getRecorder() returns the recorder with getSnapshots() and size()', async () => {
    const s = await server();
    const a = agent();
    const recorder = a.getRecorder();
    expect(recorder).toBeInstanceOf(SnapshotRecorder);
    expect(recorder.size()).toBe(0);
    await text(a, s.origin, '/static', { method: 'PUT', body: 'payload' });
    expect(recorder.size()).toBe(1);
    const [record] = recorder.getSnapshots();
    expect(record!.request).toMatchObject({ method: 'PUT', url: `${s.origin}/static`, body: 'payload' });
    expect(record!.responses[0]!.statusCode).toBe(200);
    expect(Buffer.from(record!.responses[0]!.body, 'base64').toString()).toBe('static PUT /static');
    // A copy: changing it does not change what is held.
    record!.responses[0]!.statusCode = 500;
    expect(recorder.getSnapshots()[0]!.responses[0]!.statusCode).toBe(200);
  });

  it('saveSnapshots(path) and loadSnapshots(path) take another file than snapshotPath', async () => {
    const s = await server();
    const file = snapshotFile();
    const other = `${file}.other.json`;
    const a = agent({ snapshotPath: file });
    await text(a, s.origin, '/static');
    await a.saveSnapshots(other);
    const player = agent({ mode: 'playback' });
    await player.loadSnapshots(other);
    expect(player.getRecorder().size()).toBe(1);
    expect(await text(player, s.origin, '/static')).toBe('static GET /static');
  });

  it('saveSnapshots() and loadSnapshots() without any path reject', async () => {
    const a = agent();
    await expect(a.saveSnapshots()).rejects.toThrow(new errors.InvalidArgumentError('Snapshot path is required'));
    await expect(a.loadSnapshots()).rejects.toThrow(new errors.InvalidArgumentError('Snapshot path is required'));
  });

  it('clearSnapshots() forgets everything held', async () => {
    const s = await server();
    const a = agent({ mode: 'update' });
    await text(a, s.origin, '/count');
    a.clearSnapshots();
    expect(a.getRecorder().size()).toBe(0);
    await text(a, s.origin, '/count');
    expect(s.seen).toHaveLength(2);
  });

  it('replaceSnapshots(entries) holds exactly those, checked', async () => {
    const s = await server();
    const recorder = agent();
    await text(recorder, s.origin, '/static');
    const entries: SnapshotEntry[] = recorder.getRecorder().getEntries();
    entries[0]!.snapshot.response.body = Buffer.from('replaced').toString('base64');

    const player = agent({ mode: 'playback' });
    player.replaceSnapshots(entries);
    expect(player.getRecorder().size()).toBe(1);
    expect(await text(player, s.origin, '/static')).toBe('replaced');
    expect(() => player.replaceSnapshots([{ hash: 'x' } as unknown as SnapshotEntry])).toThrow(
      'replaceSnapshots(entries): entry 0: snapshot must be an object',
    );
    expect(() => player.replaceSnapshots({} as unknown as SnapshotEntry[])).toThrow(errors.InvalidArgumentError);
  });

  it('close() saves in record and update mode, with a callback too', async () => {
    const s = await server();
    for (const mode of ['record', 'update'] as const) {
      const file = snapshotFile();
      const a = agent({ snapshotPath: file, mode });
      await text(a, s.origin, '/static');
      await new Promise<void>((resolve, reject) => a.close((err) => (err ? reject(err) : resolve())));
      expect(JSON.parse(readFileSync(file, 'utf8')), mode).toHaveLength(1);
    }
  });

  it('close() lets requests in flight finish and records them before saving', async () => {
    const s = await server();
    const file = snapshotFile();
    const a = agent({ snapshotPath: file });
    const body = a.request({ origin: s.origin, path: '/big', method: 'GET' }).then((r) => r.body.arrayBuffer());
    const closing = a.close();
    await expect(text(a, s.origin, '/static')).rejects.toBeInstanceOf(errors.ClientClosedError);
    expect((await body).byteLength).toBe(BIG.length);
    await closing;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveLength(1);
  });

  it('close() rejects when the snapshots cannot be saved', async () => {
    const s = await server();
    const tmp = tempDir();
    cleanup.push(tmp.remove);
    const a = agent({ snapshotPath: tmp.dir });
    await text(a, s.origin, '/static');
    await expect(a.close()).rejects.toThrow(`Cannot write snapshot file ${tmp.dir}`);
  });

  it('refuses requests after close() and destroy()', async () => {
    const s = await server();
    const a = agent();
    await a.close();
    await expect(text(a, s.origin, '/static')).rejects.toBeInstanceOf(errors.ClientClosedError);
    const b = agent();
    await b.destroy();
    await expect(text(b, s.origin, '/static')).rejects.toBeInstanceOf(errors.ClientDestroyedError);
  });
});
