// `npm run demo`: ferro at work against a local server — request() with the body mixin,
// dispatch() with a controller-based handler, a Pool under concurrent load, and a SnapshotAgent
// recording real traffic and replaying it with the server stopped.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pool, SnapshotAgent, fetch } from '../dist/index.js';

const server = createServer((req, res) => {
  if (req.url === '/json') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ hello: 'ferro', method: req.method }));
  } else if (req.url === '/chunked') {
    res.writeHead(200, { trailer: 'x-done' });
    res.write('streamed, ');
    res.write('in chunks');
    res.addTrailers({ 'x-done': 'yes' });
    res.end();
  } else {
    res.end(`you asked for ${req.url}`);
  }
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;
console.log(`server listening at ${origin}\n`);

// 1. request() and the body mixin
const client = new Client(origin);
const json = await client.request({ path: '/json', method: 'GET' });
console.log('request /json →', json.statusCode, json.headers['content-type'], await json.body.json());

const text = await client.request({ path: '/chunked', method: 'GET' });
console.log('request /chunked →', JSON.stringify(await text.body.text()), 'trailers', text.trailers);

// 2. dispatch() with a controller-based handler
await new Promise((resolve, reject) => {
  const chunks = [];
  client.dispatch(
    { path: '/dispatch', method: 'GET' },
    {
      onRequestStart() {},
      onResponseStart(controller, statusCode, headers) {
        console.log('dispatch /dispatch → status', statusCode, 'content-length', headers['content-length']);
      },
      onResponseData(controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        console.log('dispatch /dispatch → body', JSON.stringify(Buffer.concat(chunks).toString()));
        resolve();
      },
      onResponseError(controller, err) {
        reject(err);
      },
    },
  );
});

// 3. A pool under load
const pool = new Pool(origin, { connections: 4 });
const started = process.hrtime.bigint();
const bodies = await Promise.all(
  Array.from({ length: 200 }, (_, i) => pool.request({ path: `/n/${i}`, method: 'GET' }).then((r) => r.body.text())),
);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
console.log(`pool: ${bodies.length} requests over 4 connections in ${ms.toFixed(1)} ms; last body: ${bodies.at(-1)}`);

// 4. Record real traffic to a snapshot file, stop the server, replay it
const dir = mkdtempSync(join(tmpdir(), 'ferro-demo-'));
const snapshotPath = join(dir, 'snapshots.json');
const ask = (agent) =>
  agent.request({ origin, path: '/json', method: 'GET', headers: { authorization: 'Bearer demo-secret' } });
const recorder = new SnapshotAgent({ mode: 'record', snapshotPath });
const live = await (await ask(recorder)).body.json();
const liveFetch = await (await fetch(`${origin}/chunked`, { dispatcher: recorder })).text();
await recorder.close(); // writes the snapshot file
const entry = JSON.parse(readFileSync(snapshotPath, 'utf8')).find((e) => e.snapshot.request.url.endsWith('/json'));
console.log('snapshot: recorded', JSON.stringify(live), '- stored authorization:', entry.snapshot.request.headers.authorization);

await Promise.all([client.close(), pool.close()]);
server.close();
await once(server, 'close');

const player = new SnapshotAgent({ mode: 'playback', snapshotPath });
const replayed = await (await ask(player)).body.json();
const replayedFetch = await (await fetch(`${origin}/chunked`, { dispatcher: player })).text();
console.log('snapshot: replayed with the server stopped', JSON.stringify(replayed), JSON.stringify(replayedFetch));
console.log('snapshot: identical to the live responses:', JSON.stringify(replayed) === JSON.stringify(live) && replayedFetch === liveFetch);
try {
  await player.request({ origin, path: '/json?page=2', method: 'GET', headers: { authorization: 'Bearer demo-secret' } });
} catch (err) {
  console.log(`snapshot: a miss explains itself:\n  ${err.message.split('\n').join('\n  ')}`);
}
await player.close();
rmSync(dir, { recursive: true, force: true });
