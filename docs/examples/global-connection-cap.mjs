// maxGlobalConnections: at most N sockets across every origin of an Agent. Requests over the cap
// wait (origins take turns) instead of failing; maxQueueTime fails one that waited too long.
import { Agent, errors, setGlobalDispatcher, request } from 'ferro';
import dc from 'node:diagnostics_channel';
import { startServer } from './_server.mjs';

const servers = await Promise.all([startServer(), startServer(), startServer()]);

const agent = new Agent({ maxGlobalConnections: 2, maxQueueTime: 5_000 });
setGlobalDispatcher(agent); // the top-level shortcuts now share the cap too

// Requests that wait for the cap, and leave the queue, as they happen.
let peak = 0;
dc.subscribe('lib:pool:queue', ({ queued }) => (peak = Math.max(peak, queued)));

// 30 requests to three origins, through two sockets.
const bodies = await Promise.all(
  servers.flatMap((s, i) => Array.from({ length: 10 }, (_, n) => request(`${s.origin}/origin${i}/${n}`).then((r) => r.body.text()))),
);
console.log(bodies.length, 'responses;', bodies[0]);
console.log('most requests waiting at one origin:', peak);

// Per origin and in total: open and idle sockets, requests pending (sent) and queued, the oldest wait.
const { total } = agent.stats;
console.log('total:', total);
if (total.open > 2) throw new Error('the cap was exceeded');

console.log(new errors.QueueTimeoutError().code); // UND_ERR_QUEUE_TIMEOUT

await agent.close();
for (const s of servers) s.close();
