import { createServer } from 'node:http';
import { once } from 'node:events';
import { Client } from 'ferro';

// Each response is 96 KiB: 80 KiB at once (more than a body's 64 KiB high-water mark, so a body
// nobody reads pauses its request, and its connection with it), the rest half a second later.
const server = createServer((req, res) => {
  res.setHeader('content-length', 96 * 1024);
  res.write(Buffer.alloc(80 * 1024, 97));
  setTimeout(() => res.end(Buffer.alloc(16 * 1024, 98)), 500);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// One connection. Without the timeout the second request would wait for the first body to be
// read or garbage-collected; with it, an unread body is let go 100 ms after its response head
// (default 30 s; 0 turns it off).
const client = new Client(origin, { unconsumedBodyTimeout: 100 });
const forgotten = await client.request({ path: '/forgotten', method: 'GET' });
const next = await client.request({ path: '/next', method: 'GET' });
console.log('second request on the same connection:', next.statusCode, (await next.body.text()).length, 'bytes');

// Reading the forgotten body now fails instead of returning part of it.
const err = await forgotten.body.text().catch((e) => e);
console.log(err.name, err.code, err.message);

await client.close();
server.close();
