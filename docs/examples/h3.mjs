// HTTP/3: an https server (TCP) advertises HTTP/3 on its port with Alt-Svc, and an HTTP/3 server
// answers on the same port over UDP (the test suite's quinn + h3 server, crates/h3-test-server).
// An `allowH3` client makes its first request over TCP, learns the Alt-Svc entry, and sends the
// next ones over QUIC; `h3Options.priorKnowledge` goes to HTTP/3 straight away, and with
// `h3Options.zeroRtt` a resumed connection sends its GET in 0-RTT early data.
import { createServer } from 'node:https';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from 'ferro';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tlsPath = (name) => `${root}__test__/fixtures/tls/${name}`;
const tls = (name) => readFileSync(tlsPath(name));

// TCP: answers `over tcp` and says where HTTP/3 is.
const https = createServer({ key: tls('localhost.key'), cert: tls('localhost.pem') }, (req, res) => {
  res.setHeader('alt-svc', `h3=":${https.address().port}"; ma=3600`);
  res.end('over tcp');
});
https.listen(0, '127.0.0.1');
await once(https, 'listening');
const { port } = https.address();

// UDP, same port: the HTTP/3 server (built by cargo when missing).
const bin = `${root}target/debug/h3-test-server`;
if (!existsSync(bin)) execFileSync('cargo', ['build', '-p', 'h3-test-server', '--quiet'], { cwd: root });
// --accept-delay: a network's round trip, which loopback lacks (early data arrives before the handshake can end).
const args = ['--port', String(port), '--cert', tlsPath('localhost.pem'), '--key', tlsPath('localhost.key'), '--accept-delay', '20'];
const h3 = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
await once(createInterface({ input: h3.stdout }), 'line');

const origin = `https://localhost:${port}`;
const client = new Client(origin, { connect: { ca: tls('ca.pem') }, allowH3: true });
client.on('connect', () => console.log('connected'));
for (const path of ['/first', '/second', '/third']) {
  const { statusCode, headers, body } = await client.request({ path, method: 'GET' });
  const over = headers['x-conn'] ? 'HTTP/3' : (await body.text(), 'TCP');
  if (over === 'HTTP/3') await body.dump();
  console.log(`${path}: ${statusCode} over ${over}`);
}

// Prior knowledge: no TCP at all.
const direct = new Client(origin, { connect: { ca: tls('ca.pem') }, allowH3: true, h3Options: { priorKnowledge: true } });
const { body } = await direct.request({ path: '/trailers', method: 'GET' });
console.log(`prior knowledge: ${await body.text()}`);

// 0-RTT: the second connection resumes the first one's TLS session and sends the GET early.
const early = new Client(origin, { connect: { ca: tls('ca.pem') }, allowH3: true, keepAliveTimeout: 100, h3Options: { priorKnowledge: true, zeroRtt: true } });
for (const round of [1, 2]) {
  const { headers, body } = await early.request({ path: '/echo', method: 'GET' });
  await body.dump();
  console.log(`zeroRtt: connection ${headers['x-conn']}, early data: ${headers['x-early-data'] === '1' ? 'yes' : 'no'}`);
  if (round === 1) await once(early, 'disconnect');
}

await client.close();
await direct.close();
await early.close();
h3.stdin.end('quit\n');
await once(h3, 'exit');
https.close();
