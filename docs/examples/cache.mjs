import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, cacheStores, interceptors } from 'ferro';

// An origin that counts what reaches it: fresh for 60 s, with an ETag for revalidation.
let hits = 0;
const server = createServer((req, res) => {
  hits++;
  if (req.headers['if-none-match'] === '"v1"') {
    res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=60' });
    return res.end();
  }
  res.writeHead(200, { etag: '"v1"', 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
  res.end(`hello from the origin (${req.url})`);
}).listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// A bounded in-memory store (least recently used entries are evicted first).
const store = new cacheStores.MemoryCacheStore({ maxSize: 10 * 1024 * 1024, maxCount: 500, maxEntrySize: 1024 * 1024 });
const agent = new Agent().compose(interceptors.cache({ store }));

for (let i = 0; i < 3; i++) {
  const { statusCode, headers, body } = await agent.request({ origin, path: '/greeting', method: 'GET' });
  console.log(statusCode, `age=${headers.age ?? '-'}`, await body.text());
}
console.log('origin hits:', hits); // 1: the second and third came from the cache

// Request directives: no-cache makes the cache revalidate (here the origin answers 304).
const revalidated = await agent.request({ origin, path: '/greeting', method: 'GET', headers: { 'cache-control': 'no-cache' } });
console.log(revalidated.statusCode, await revalidated.body.text(), '- origin hits:', hits);

// only-if-cached never reaches the origin: 504 when nothing is stored.
const miss = await agent.request({ origin, path: '/never-fetched', method: 'GET', headers: { 'cache-control': 'only-if-cached' } });
console.log('only-if-cached miss:', miss.statusCode);
await miss.body.dump();

// A POST invalidates what is stored for its URL.
await (await agent.request({ origin, path: '/greeting', method: 'POST', body: 'x' })).body.dump();
await (await agent.request({ origin, path: '/greeting', method: 'GET' })).body.dump();
console.log('after POST, origin hits:', hits);

await agent.close();
server.close();
