// A cache shared by every replica of a service: RedisCacheStore (needs `npm install iovalkey`).
// Set REDIS_URL to use your server; without it this example starts a throwaway redis-server
// (and says it skipped when there is none on PATH).
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, cacheStores, interceptors } from 'ferro';

let url = process.env.REDIS_URL;
let redis;
if (url === undefined) {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    console.log('skipped: set REDIS_URL or install redis-server');
    process.exit(0);
  }
  const port = 20000 + Math.floor(Math.random() * 20000);
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  let log = '';
  for await (const chunk of redis.stdout) if ((log += chunk).includes('Ready to accept connections')) break;
  url = `redis://127.0.0.1:${port}`;
}

// An origin that counts what reaches it.
let hits = 0;
const server = createServer((req, res) => {
  hits++;
  res.writeHead(200, { 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
  res.end(`rendered once, at hit ${hits}`);
}).listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// Two replicas: each has its own connection and dispatcher; the key prefix names the application.
const replica = () => {
  const store = new cacheStores.RedisCacheStore({ url, keyPrefix: 'my-service:http-cache:', maxEntrySize: 1024 * 1024 });
  return { store, agent: new Agent().compose(interceptors.cache({ store })) };
};
const a = replica();
const b = replica();

const first = await a.agent.request({ origin, path: '/report', method: 'GET' });
console.log('replica A:', await first.body.text());
// Filing the response takes a round trip after its body ended; replicas' requests are further apart.
await a.store.flush();
const second = await b.agent.request({ origin, path: '/report', method: 'GET' });
console.log('replica B:', await second.body.text(), `(age ${second.headers.age})`);
console.log('origin hits:', hits); // 1: replica B was served what replica A stored

// An unsafe method through either replica drops the shared entry for everyone.
await (await b.agent.request({ origin, path: '/report', method: 'DELETE' })).body.dump();
await (await a.agent.request({ origin, path: '/report', method: 'GET' })).body.dump();
console.log('after DELETE, origin hits:', hits);

for (const { agent, store } of [a, b]) {
  await agent.close();
  await store.close(); // waits for responses being stored, then closes the connection
}
server.close();
redis?.kill();
