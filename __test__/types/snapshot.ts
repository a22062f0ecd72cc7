// SnapshotRecorder's methods and option types as undici declares them (types/snapshot-agent.d.ts).
// Compiled by types.test.ts; every `@ts-expect-error` fails the compile if its error does NOT occur.
import { SnapshotAgent } from 'ferro';
import { SnapshotRecorder } from 'ferro/types/snapshot-agent';

const recorder = new SnapshotRecorder({ snapshotPath: './s.json', mode: 'playback', maxSnapshots: 5 });
export const recorded: Promise<void> = recorder.record({ origin: 'http://a', path: '/', method: 'GET' }, { statusCode: 200, body: 'x' });
export const found: SnapshotRecorder.Snapshot | undefined = recorder.findSnapshot({ origin: 'http://a', path: '/' });
export const loaded: Promise<void> = recorder.loadSnapshots();
export const saved: Promise<void> = recorder.saveSnapshots('./other.json');
export const all: SnapshotRecorder.Snapshot[] = recorder.getSnapshots();
export const deleted: boolean = recorder.deleteSnapshot({ origin: 'http://a' });
export const info: SnapshotRecorder.SnapshotInfo | null = recorder.getSnapshotInfo({ origin: 'http://a' });
export const replaced: void = recorder.replaceSnapshots([
  {
    hash: 'h',
    snapshot: {
      request: { method: 'GET', url: 'http://a/', headers: {} },
      responses: [{ statusCode: 200, headers: {}, body: '', trailers: {} }],
      callCount: 0,
      timestamp: '2025-01-01T00:00:00.000Z',
    },
  },
]);
export const destroyed: void = recorder.destroy();
export const mode: SnapshotRecorder.SnapshotRecorderMode = new SnapshotAgent().getMode();
export const viaAgent: SnapshotRecorder = new SnapshotAgent().getRecorder();
export const filters: SnapshotRecorder.Options = {
  shouldRecord: (opts) => opts.path.startsWith('/api'),
  excludeUrls: ['/health', /token=/],
};

// @ts-expect-error normalizeBody must return a string
export const badBody: SnapshotRecorder.Options = { normalizeBody: (body: string | Buffer | null | undefined) => body };
// @ts-expect-error normalizeQuery must return a string
export const badQuery: SnapshotRecorder.Options = { normalizeQuery: (query: URLSearchParams) => query };
// @ts-expect-error an unknown mode
export const badMode: SnapshotRecorder.Options = { mode: 'replay' };
// @ts-expect-error a snapshot has responses[], not a single response
export const badSnapshot: SnapshotRecorder.Snapshot = { request: { method: 'GET', url: 'http://a/', headers: {} }, callCount: 0, timestamp: '' };
