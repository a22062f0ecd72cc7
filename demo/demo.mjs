// `npm run demo`: ferro at work against a local server — request() with the body mixin,
// dispatch() with a controller-based handler, and a Pool under concurrent load.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Client, Pool } from '../dist/index.js';

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

await Promise.all([client.close(), pool.close()]);
server.close();
