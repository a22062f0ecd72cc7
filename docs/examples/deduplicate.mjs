import { createServer } from 'node:http';
import { once } from 'node:events';
import diagnosticsChannel from 'node:diagnostics_channel';
import { Agent, interceptors } from 'ferro';

// A slow origin that counts what reaches it.
let hits = 0;
const server = createServer((req, res) => {
  hits++;
  setTimeout(() => res.end(`report for ${req.url}`), 50);
}).listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// See requests start, be joined and leave the pending set.
diagnosticsChannel.subscribe('lib:request:pending-requests', ({ type, size, callers }) => {
  console.log(`pending-requests: ${type} (joinable: ${size}, callers: ${callers})`);
});

// x-request-id differs on every call, so it is left out of the identity of a request.
const agent = new Agent().compose(interceptors.deduplicate({ excludeHeaderNames: ['x-request-id'] }));
const get = (i) => agent.request({ origin, path: '/report', method: 'GET', headers: { 'x-request-id': String(i) } });

const responses = await Promise.all([1, 2, 3, 4, 5].map(get));
const bodies = await Promise.all(responses.map((r) => r.body.text()));
console.log(bodies);
console.log('origin hits:', hits); // 1

await agent.close();
server.close();
