// SnapshotRecorder on its own, with the methods undici declares (issue 29): record, findSnapshot,
// getSnapshots / size per request, getSnapshotInfo, deleteSnapshot, replaceSnapshots with
// undici's `{ hash, snapshot: { responses[] } }`, loadSnapshots / saveSnapshots, destroy, and the
// argument checks.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotAgent, SnapshotRecorder, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/cleanup.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const ORIGIN = 'http://recorder.test';
const req = (path: string, extra: object = {}) => ({ origin: ORIGIN, path, method: 'GET', ...extra });
const reply = (status: number, body: string) => ({ statusCode: status, headers: { 'content-type': 'text/plain' }, body, trailers: {} });
const text = (base64: string): string => Buffer.from(base64, 'base64').toString();

function recorder(options?: SnapshotRecorder.Options): SnapshotRecorder {
  const r = new SnapshotRecorder(options);
  cleanup.defer(async () => r.destroy());
  return r;
}

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferro-recorder-'));
  cleanup.defer(async () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'snapshots.json');
}

describe('SnapshotRecorder', () => {
  it('records responses per request and findSnapshot plays them in order, the last repeating', async () => {
    const r = recorder();
    await r.record(req('/seq'), reply(200, 'first'));
    await r.record(req('/seq'), reply(201, 'second'));
    await r.record(req('/other'), reply(404, 'none'));
    expect(r.size()).toBe(2);
    const [seq, other] = r.getSnapshots();
    expect(seq).toMatchObject({ request: { method: 'GET', url: `${ORIGIN}/seq` }, callCount: 0 });
    expect(seq!.responses.map((x) => [x.statusCode, text(x.body)])).toEqual([[200, 'first'], [201, 'second']]);
    expect(other!.responses).toHaveLength(1);

    const found = [1, 2, 3].map(() => r.findSnapshot(req('/seq'))!);
    expect(found.map((f) => [f.response!.statusCode, f.callCount])).toEqual([[200, 1], [201, 2], [201, 3]]);
    expect(r.findSnapshot(req('/missing'))).toBeUndefined();
    r.resetCallCounts();
    expect(r.findSnapshot(req('/seq'))!.response!.statusCode).toBe(200);
  });

  it('getSnapshotInfo and deleteSnapshot take dispatch options', async () => {
    const r = recorder();
    await r.record(req('/seq', { method: 'POST', body: 'payload' }), reply(200, 'a'));
    await r.record(req('/seq', { method: 'POST', body: 'payload' }), reply(200, 'b'));
    const info = r.getSnapshotInfo(req('/seq', { method: 'POST', body: 'payload' }));
    expect(info).toMatchObject({ responseCount: 2, callCount: 0, request: { method: 'POST', body: 'payload' } });
    expect(info!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.getSnapshotInfo(req('/seq', { method: 'POST', body: 'other' }))).toBeNull();
    expect(r.deleteSnapshot(req('/seq', { method: 'POST', body: 'other' }))).toBe(false);
    expect(r.deleteSnapshot(req('/seq', { method: 'POST', body: 'payload' }))).toBe(true);
    expect(r.size()).toBe(0);
  });

  it("replaceSnapshots takes undici's SnapshotData (responses[]) and getSnapshots gives it back", () => {
    const r = recorder();
    const data: SnapshotRecorder.SnapshotData[] = [
      {
        hash: 'from-undici',
        snapshot: {
          request: { method: 'GET', url: `${ORIGIN}/x`, headers: {} },
          responses: [reply(200, Buffer.from('one').toString('base64')), reply(202, Buffer.from('two').toString('base64'))],
          callCount: 0,
          timestamp: '2025-01-01T00:00:00.000Z',
        },
      },
    ];
    r.replaceSnapshots(data);
    expect(r.getSnapshots()).toEqual([data[0]!.snapshot]);
    expect(text(r.findSnapshot(req('/x'))!.response!.body)).toBe('one');
    expect(text(r.findSnapshot(req('/x'))!.response!.body)).toBe('two');
    expect(() => r.replaceSnapshots([{ hash: 'x' } as unknown as SnapshotRecorder.SnapshotData])).toThrow(errors.InvalidArgumentError);
  });

  it('saveSnapshots and loadSnapshots round-trip through the file', async () => {
    const file = tempFile();
    const a = recorder({ snapshotPath: file });
    await a.record(req('/f'), reply(200, 'x'));
    await a.record(req('/f'), reply(500, 'y'));
    await a.saveSnapshots();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveLength(2);
    const b = recorder();
    await b.loadSnapshots(file);
    expect(b.getSnapshots()).toEqual(a.getSnapshots());
    await expect(b.saveSnapshots()).rejects.toThrow(new errors.InvalidArgumentError('Snapshot path is required'));
  });

  it('shouldRecord, shouldPlayback and excludeUrls apply to record and findSnapshot', async () => {
    const seen: string[] = [];
    const r = recorder({
      shouldRecord: (opts) => (seen.push(`record ${opts.path}`), opts.path !== '/no-record'),
      shouldPlayback: (opts) => (seen.push(`play ${opts.path}`), opts.path !== '/no-play'),
      excludeUrls: ['/secret'],
    });
    await r.record(req('/no-record'), reply(200, 'x'));
    await r.record(req('/secret'), reply(200, 'x'));
    await r.record(req('/no-play'), reply(200, 'x'));
    expect(r.size()).toBe(1);
    expect(r.findSnapshot(req('/no-play'))).toBeUndefined();
    expect(seen).toEqual(['record /no-record', 'record /no-play', 'play /no-play']);
  });

  it('maxSnapshots bounds the requests held, not their responses', async () => {
    const r = recorder({ maxSnapshots: 1 });
    await r.record(req('/a'), reply(200, '1'));
    await r.record(req('/a'), reply(200, '2'));
    expect(r.getSnapshots()[0]!.responses).toHaveLength(2);
    await r.record(req('/b'), reply(200, '3'));
    expect(r.getSnapshots().map((s) => s.request.url)).toEqual([`${ORIGIN}/b`]);
  });

  it('destroy() stops the automatic flush', async () => {
    vi.useFakeTimers();
    cleanup.defer(async () => void vi.useRealTimers());
    const file = tempFile();
    const [kept, destroyed] = [recorder({ snapshotPath: file, autoFlush: true, flushInterval: 5 }), recorder({ snapshotPath: file, autoFlush: true, flushInterval: 5 })];
    const saves = [kept, destroyed].map((r) => vi.spyOn(r, 'saveSnapshots').mockResolvedValue(undefined));
    destroyed.destroy();
    await kept.record(req('/a'), reply(200, '1'));
    await destroyed.record(req('/a'), reply(200, '1'));
    vi.advanceTimersByTime(20);
    // The kept one saves at each interval (the mock leaves it dirty); the destroyed one never.
    expect(saves[0]!.mock.calls.length).toBe(4);
    expect(saves[1]!.mock.calls.length).toBe(0);
  });

  it('bad arguments are InvalidArgumentError at the call', async () => {
    const r = recorder();
    expect(() => new SnapshotRecorder({ mode: 'replay' as 'record' })).toThrow(errors.InvalidArgumentError);
    await expect(r.record({}, reply(200, 'x'))).rejects.toThrow(errors.InvalidArgumentError);
    await expect(r.record(req('/a'), {})).rejects.toThrow(new errors.InvalidArgumentError('response.statusCode must be an integer from 100 to 999'));
    await expect(r.record(req('/a'), { statusCode: 200, body: 5 as unknown as string })).rejects.toThrow(errors.InvalidArgumentError);
    expect(() => r.findSnapshot({})).toThrow(errors.InvalidArgumentError);
    expect(() => r.getSnapshotInfo({})).toThrow(errors.InvalidArgumentError);
  });

  it("is the SnapshotAgent's recorder: what the agent records is found through it", async () => {
    const agent = cleanup.add(new SnapshotAgent({ mode: 'playback' }));
    await agent.getRecorder().record(req('/through'), reply(203, 'via recorder'));
    const res = await agent.request(req('/through'));
    expect([res.statusCode, await res.body.text()]).toEqual([203, 'via recorder']);
    expect(agent.getSnapshotInfo(req('/through'))!.callCount).toBe(1);
  });
});
