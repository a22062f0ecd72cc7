// HTTP/2: a node:http2 server that speaks only h2; ferro negotiates it through ALPN and runs
// every request as a stream of one session.
import { createSecureServer } from 'node:http2';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { Client } from 'ferro';

// The test suite's certificate for localhost and the CA that signed it.
const tls = (name) => readFileSync(new URL(`../../__test__/fixtures/tls/${name}`, import.meta.url));
const server = createSecureServer({ key: tls('localhost.key'), cert: tls('localhost.pem') });
let sessions = 0;
server.on('session', () => sessions++);
server.on('stream', (stream, headers) => {
  stream.respond({ ':status': 200, 'content-type': 'text/plain' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'x-served-by': 'h2' }));
  stream.end(`hello ${headers[':path']}`);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');

const client = new Client(`https://localhost:${server.address().port}`, { connect: { ca: tls('ca.pem') } });
const results = await Promise.all(
  ['/a', '/b', '/c'].map(async (path) => {
    const { statusCode, body, trailers } = await client.request({ path, method: 'GET' });
    const text = await body.text();
    return `${statusCode} ${text} (trailer x-served-by: ${trailers['x-served-by']})`;
  }),
);
console.log(results.join('\n'));
console.log(`sessions opened: ${sessions}`);

await client.close();
server.close();
