// H2CClient: HTTP/2 without TLS, by prior knowledge, to a node:http2 plain server.
import { createServer } from 'node:http2';
import { once } from 'node:events';
import { H2CClient } from 'ferro';

const server = createServer((req, res) => res.end(`HTTP/${req.httpVersion} ${req.headers[':scheme']}://${req.headers[':authority']}${req.url}`));
let sessions = 0;
server.on('session', () => sessions++);
server.listen(0, '127.0.0.1');
await once(server, 'listening');

const client = new H2CClient(`http://127.0.0.1:${server.address().port}`);
const bodies = await Promise.all(['/a', '/b', '/c'].map(async (path) => (await client.request({ path, method: 'GET' })).body.text()));
console.log(bodies.join('\n'));
console.log(`sessions opened: ${sessions}`);

await client.close();
server.close();
