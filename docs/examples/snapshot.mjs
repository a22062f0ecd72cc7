import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotAgent } from 'ferro';
import { startServer } from './_server.mjs';

const dir = mkdtempSync(join(tmpdir(), 'ferro-snapshots-'));
const snapshotPath = join(dir, 'api.json');
const server = await startServer();

// Record: real requests, responses kept; close() writes the file.
const recorder = new SnapshotAgent({ mode: 'record', snapshotPath, excludeHeaders: ['date'] });
const live = await recorder.request({ origin: server.origin, path: '/json', method: 'GET' });
console.log('recorded', live.statusCode, await live.body.json());
await recorder.close();
server.close();

// Playback: no network at all; the same request gets the recorded response.
const player = new SnapshotAgent({ mode: 'playback', snapshotPath });
const replayed = await player.request({ origin: server.origin, path: '/json', method: 'GET' });
console.log('replayed', replayed.statusCode, await replayed.body.json());

// A request that was never recorded fails, saying which recording came closest.
await player.request({ origin: server.origin, path: '/json?page=2', method: 'GET' }).catch((err) => console.log(err.message));
await player.close();
rmSync(dir, { recursive: true, force: true });
