import { Agent, interceptors } from 'ferro';
import { createServer } from 'node:http';
import { once } from 'node:events';
import zlib from 'node:zlib';

// A server answering with a body compressed twice: gzip, then brotli.
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-encoding': 'gzip, br', 'x-served': 'yes' });
  res.end(zlib.brotliCompressSync(zlib.gzipSync('hello, decompressed world\n'.repeat(3))));
}).listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// The engine undoes the codings as the bytes arrive; maxSize stops a decompression bomb.
const agent = new Agent().compose(interceptors.decompress({ maxSize: 10 * 1024 * 1024 }));
const { statusCode, headers, body } = await agent.request({ origin, path: '/', method: 'GET' });
console.log(statusCode, 'content-encoding:', headers['content-encoding'] ?? '(removed)');
console.log(await body.text());

await agent.close();
server.close();
