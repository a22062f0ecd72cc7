// Request timings (a ferro extension): when each phase of a request ended, in ms on
// performance.now()'s clock, measured in the engine. 0 means the phase did not happen: a reused
// connection reports no dns / connect / tls, an http one no tls, an IP address no dns.
import { Client, fetch } from 'ferro';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { startServer } from './_server.mjs';

const server = await startServer();
// 'localhost', so the connection resolves a name.
const origin = server.origin.replace('127.0.0.1', 'localhost');
const client = new Client(origin);

/** Each phase as ms after the request was queued. */
const phases = (t) =>
  Object.fromEntries(Object.entries(t).map(([phase, at]) => [phase, at === 0 ? 0 : +(at - t.queued).toFixed(3)]));

// request(): ResponseData.timings; `end` is filled in once the body has been read.
const res = await client.request({ path: '/json', method: 'GET' });
await res.body.json();
console.log('first request (new connection):', phases(res.timings));

const again = await client.request({ path: '/json', method: 'GET' });
await again.body.dump();
console.log('second request (reused connection):', phases(again.timings));
console.log('time to first byte:', (again.timings.firstByte - again.timings.requestSent).toFixed(3), 'ms');

// dispatch(): the controller's timings, complete in onResponseEnd.
await new Promise((resolve, reject) =>
  client.dispatch(
    { path: '/', method: 'GET' },
    {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData() {},
      onResponseEnd(controller) {
        console.log('dispatch took', (controller.timings.end - controller.timings.queued).toFixed(3), 'ms');
        resolve();
      },
      onResponseError(_controller, err) {
        reject(err);
      },
    },
  ),
);

// stream(): the factory sees the timings up to the head (`end` is still 0 there).
await client.stream({ path: '/', method: 'GET' }, ({ timings }) => {
  console.log('stream factory: head after', (timings.firstByte - timings.queued).toFixed(3), 'ms; end =', timings.end);
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
});

// fetch(): a resource timing entry, filled from the same numbers.
const url = `${origin}/fetched`;
await (await fetch(url, { dispatcher: client })).text();
const [entry] = performance.getEntriesByName(url, 'resource');
console.log('fetch entry: responseStart - requestStart =', (entry.responseStart - entry.requestStart).toFixed(3), 'ms');

await client.close();
server.close();
