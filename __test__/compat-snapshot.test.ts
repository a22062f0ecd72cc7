// SnapshotAgent as undici's (issue 11, item 13): getSnapshotInfo, resetCallCounts,
// deleteSnapshot, undici's error words, and files in undici's format (`responses[]`) played back.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotAgent, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const ORIGIN = 'http://snap.test';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A file as undici's SnapshotRecorder writes it: one entry per request, its responses in order. */
function undiciFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferro-compat-snap-'));
  cleanup.defer(async () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'undici.json');
  const entry = {
    hash: 'recorded-by-undici',
    snapshot: {
      request: { method: 'GET', url: `${ORIGIN}/seq`, headers: {} },
      responses: [
        { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: b64('first'), trailers: {} },
        { statusCode: 201, headers: {}, body: b64('second'), trailers: {} },
      ],
      callCount: 0,
      timestamp: '2025-01-01T00:00:00.000Z',
    },
  };
  writeFileSync(file, JSON.stringify([entry], null, 2));
  return file;
}

async function get(agent: SnapshotAgent, path: string): Promise<[number, string]> {
  const res = await agent.request({ origin: ORIGIN, path, method: 'GET' });
  return [res.statusCode, await res.body.text()];
}

describe("undici's snapshot files", () => {
  it('play back their responses[] in order, the last repeating', async () => {
    const agent = cleanup.add(new SnapshotAgent({ mode: 'playback', snapshotPath: undiciFile() }));
    expect(await get(agent, '/seq')).toEqual([200, 'first']);
    expect(await get(agent, '/seq')).toEqual([201, 'second']);
    expect(await get(agent, '/seq')).toEqual([201, 'second']);
  });
});

describe('getSnapshotInfo, resetCallCounts, deleteSnapshot', () => {
  it('report, rewind and forget the recordings of one request', async () => {
    const agent = cleanup.add(new SnapshotAgent({ mode: 'playback', snapshotPath: undiciFile() }));
    await agent.loadSnapshots();
    const req = { origin: ORIGIN, path: '/seq', method: 'GET' };
    expect(agent.getSnapshotInfo(req)).toMatchObject({ responseCount: 2, callCount: 0, request: { url: `${ORIGIN}/seq` } });
    expect(await get(agent, '/seq')).toEqual([200, 'first']);
    expect(agent.getSnapshotInfo(req)!.callCount).toBe(1);
    agent.resetCallCounts();
    expect(await get(agent, '/seq')).toEqual([200, 'first']);
    expect(agent.getSnapshotInfo({ origin: ORIGIN, path: '/other', method: 'GET' })).toBeNull();
    expect(agent.deleteSnapshot(req)).toBe(true);
    expect(agent.deleteSnapshot(req)).toBe(false);
    expect(agent.getSnapshotInfo(req)).toBeNull();
    expect(agent.getRecorder().size()).toBe(0);
  });
});

describe('errors in undici words', () => {
  it('save and load without a path: InvalidArgumentError "Snapshot path is required"', async () => {
    const agent = cleanup.add(new SnapshotAgent({ mode: 'record' }));
    await expect(agent.saveSnapshots()).rejects.toThrow(new errors.InvalidArgumentError('Snapshot path is required'));
    await expect(agent.loadSnapshots()).rejects.toThrow(new errors.InvalidArgumentError('Snapshot path is required'));
  });

  it('a file that cannot be loaded: UndiciError "Failed to load snapshots from <path>"', async () => {
    const file = undiciFile();
    writeFileSync(file, '{ not json');
    const agent = cleanup.add(new SnapshotAgent({ mode: 'playback', snapshotPath: file }));
    const err = await agent.loadSnapshots().then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(errors.UndiciError);
    expect(err!.message.startsWith(`Failed to load snapshots from ${file}`)).toBe(true);
  });

  it('a playback miss says "No snapshot found"', async () => {
    const agent = cleanup.add(new SnapshotAgent({ mode: 'playback', snapshotPath: undiciFile() }));
    const err = await get(agent, '/missing').then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(errors.UndiciError);
    expect(err!.message).toContain('No snapshot found for GET');
  });
});
