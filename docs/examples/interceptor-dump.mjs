import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, interceptors } from 'ferro';

const server = createServer((req, res) => {
  res.setHeader('x-size', req.url === '/big' ? 'big' : 'small');
  res.end(Buffer.alloc(req.url === '/big' ? 64 * 1024 : 1024));
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// Status and headers only: bodies up to 8 KiB are read and dropped, the connection is reused.
const agent = new Agent().compose(interceptors.dump({ maxSize: 8 * 1024 }));
const { statusCode, headers, body } = await agent.request({ origin, path: '/small', method: 'GET' });
console.log(statusCode, headers['x-size'], `body: ${(await body.text()).length} bytes`);

// Past the limit the request fails and the connection is closed (per request: dumpMaxSize).
const err = await agent.request({ origin, path: '/big', method: 'GET' }).catch((e) => e);
console.log(err.name, err.message);

await agent.close();
server.close();
