// Benchmark target: a plain node:http server and a node:https one (the test fixtures' localhost
// certificate, signed by __test__/fixtures/tls/ca.pem), run in their own process.
//
//   GET /small  -> 200, 12-byte text body with content-length
//   GET /64k    -> 200, 65536-byte body (precomputed Buffer) with content-length
//   GET /ws     -> WebSocket upgrade (plain http server): echoes every message (no extensions)
//
// When forked with an IPC channel it sends { type: 'ready', port, httpsPort } to the parent and answers
// { type: 'cpu', id } with { type: 'cpu', id, usage } (its own process.cpuUsage()), so the parent can
// tell how much CPU the server spent during a measured window. Started by hand
// (`node bench/server.mjs [port [httpsPort]]`) it prints both ports on stdout.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const SMALL = Buffer.from('hello world\n', 'latin1'); // 12 bytes
const BIG = Buffer.alloc(65536);
for (let i = 0; i < BIG.length; i++) BIG[i] = 97 + (i % 26); // 'a'..'z', cheap to eyeball

const SMALL_HEADERS = { 'content-type': 'text/plain', 'content-length': String(SMALL.length) };
const BIG_HEADERS = { 'content-type': 'application/octet-stream', 'content-length': String(BIG.length) };

function reply(res, headers, body) {
  res.writeHead(200, headers);
  res.end(body);
}

function handle(req, res) {
  // GET requests carry no body; resume() makes sure a stray body cannot stall the socket.
  req.resume();
  switch (req.url) {
    case '/small':
      return reply(res, SMALL_HEADERS, SMALL);
    case '/64k':
      return reply(res, BIG_HEADERS, BIG);
    default:
      res.writeHead(404, { 'content-length': '0' });
      res.end();
  }
}

const tlsDir = new URL('../__test__/fixtures/tls/', import.meta.url);
const server = http.createServer(handle);
const secure = https.createServer(
  { key: fs.readFileSync(new URL('localhost.key', tlsDir)), cert: fs.readFileSync(new URL('localhost.pem', tlsDir)) },
  handle,
);
// A client dropping a connection mid-handshake must not take the server down.
secure.on('tlsClientError', () => {});

for (const s of [server, secure]) {
  s.keepAliveTimeout = 10 * 60 * 1000; // never close an idle keep-alive connection during a run
  s.maxRequestsPerSocket = 0; // unlimited requests per connection
  // headersTimeout / requestTimeout: Node defaults.
}

// WebSocket echo for the ws-* scenarios: its own minimal RFC 6455 server side (client frames are
// masked; each message is sent back unmasked with the same opcode; close is answered).
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
function wsHeader(opcode, len) {
  if (len < 126) return Buffer.from([0x80 | opcode, len]);
  if (len < 65536) return Buffer.from([0x80 | opcode, 126, len >> 8, len & 0xff]);
  const h = Buffer.alloc(10);
  h[0] = 0x80 | opcode;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(len), 2);
  return h;
}
function wsEcho(socket, head) {
  let buf = head;
  let fragments = [];
  let fragOpcode = 0;
  socket.setNoDelay(true);
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let o = 0;
    for (;;) {
      if (buf.length - o < 2) break;
      const b0 = buf[o];
      let len = buf[o + 1] & 0x7f;
      let p = o + 2;
      if (len === 126) {
        if (buf.length - o < 4) break;
        len = buf.readUInt16BE(o + 2);
        p += 2;
      } else if (len === 127) {
        if (buf.length - o < 10) break;
        len = Number(buf.readBigUInt64BE(o + 2));
        p += 8;
      }
      if (buf.length < p + 4 + len) break;
      const mask = buf.subarray(p, p + 4);
      const payload = Buffer.allocUnsafe(len);
      for (let i = 0; i < len; i++) payload[i] = buf[p + 4 + i] ^ mask[i & 3];
      o = p + 4 + len;
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (opcode === 8) {
        socket.end(Buffer.concat([wsHeader(8, payload.length), payload]));
        return;
      }
      if (opcode === 9) socket.write(Buffer.concat([wsHeader(10, len), payload]));
      if (opcode === 0 || opcode === 1 || opcode === 2) {
        if (opcode !== 0) fragOpcode = opcode;
        fragments.push(payload);
        if (fin) {
          const msg = fragments.length === 1 ? fragments[0] : Buffer.concat(fragments);
          fragments = [];
          socket.write(wsHeader(fragOpcode, msg.length));
          socket.write(msg);
        }
      }
    }
    buf = o === buf.length ? Buffer.alloc(0) : buf.subarray(o);
  });
}
server.on('upgrade', (req, socket, head) => {
  const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + WS_GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  wsEcho(socket, head);
});

const listen = (s, port) => new Promise((resolve) => s.listen(port, '127.0.0.1', () => resolve(s.address().port)));
const port = await listen(server, Number(process.argv[2] ?? 0));
const httpsPort = await listen(secure, Number(process.argv[3] ?? 0));
if (process.send) process.send({ type: 'ready', port, httpsPort });
else console.log(port, httpsPort);

if (process.send) {
  process.on('message', (msg) => {
    if (msg && msg.type === 'cpu') process.send({ type: 'cpu', id: msg.id, usage: process.cpuUsage() });
  });
  // The parent went away (crashed, killed, finished): do not linger.
  process.on('disconnect', () => process.exit(0));
}
