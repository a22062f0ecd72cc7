// Benchmark target: a plain node:http server and a node:https one (the test fixtures' localhost
// certificate, signed by __test__/fixtures/tls/ca.pem), run in their own process.
//
//   GET /small  -> 200, 12-byte text body with content-length
//   GET /64k    -> 200, 65536-byte body (precomputed Buffer) with content-length
//   GET /ws     -> WebSocket upgrade (plain http server): echoes every message (no extensions)
//   GET /gzip-1m, /br-1m -> 200, a 1 MiB text body compressed (precomputed), with content-encoding
//
// When forked with an IPC channel it sends { type: 'ready', port, httpsPort } to the parent and answers
// { type: 'cpu', id } with { type: 'cpu', id, usage } (its own process.cpuUsage()), so the parent can
// tell how much CPU the server spent during a measured window. Started by hand
// (`node bench/server.mjs [port [httpsPort]]`) it prints both ports on stdout.
//
// BENCH_SERVER_WORKERS=N (N > 1) runs a node:cluster of N worker processes sharing both ports, so
// the server is not the bottleneck when it has cores of its own; the CPU answer then sums them all.
import cluster from 'node:cluster';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import { acceptWebSocketEcho } from './ws-echo.mjs';
import zlib from 'node:zlib';

const SMALL = Buffer.from('hello world\n', 'latin1'); // 12 bytes
const BIG = Buffer.alloc(65536);
for (let i = 0; i < BIG.length; i++) BIG[i] = 97 + (i % 26); // 'a'..'z', cheap to eyeball

// 1 MiB of varied text (so compression is realistic, ~4:1), for the decompress scenarios.
const TEXT_1M = Buffer.alloc(1024 * 1024);
for (let i = 0, n = 1; i < TEXT_1M.length; i++) {
  n = (n * 1103515245 + 12345) & 0x7fffffff;
  TEXT_1M[i] = n % 7 === 0 ? 32 : 97 + ((n >> 8) % 26);
}
const GZIP_1M = zlib.gzipSync(TEXT_1M);
const BR_1M = zlib.brotliCompressSync(TEXT_1M, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
const coded = (coding, body) => ({ 'content-type': 'text/plain', 'content-encoding': coding, 'content-length': String(body.length) });

const SMALL_HEADERS = { 'content-type': 'text/plain', 'content-length': String(SMALL.length) };
const BIG_HEADERS = { 'content-type': 'application/octet-stream', 'content-length': String(BIG.length) };

const CACHEABLE_HEADERS = { ...SMALL_HEADERS, 'cache-control': 'max-age=3600' };
// For the cookies scenarios: every response sets (replaces) one cookie.
const SET_COOKIE_HEADERS = { ...SMALL_HEADERS, 'set-cookie': 'sid=abc123; Path=/; HttpOnly' };

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
    case '/cacheable':
      // For the cache scenario: fresh for an hour, so after the first response every request is a hit.
      return reply(res, CACHEABLE_HEADERS, SMALL);
    case '/set-cookie':
      return reply(res, SET_COOKIE_HEADERS, SMALL);
    case '/gzip-1m':
      return reply(res, coded('gzip', GZIP_1M), GZIP_1M);
    case '/br-1m':
      return reply(res, coded('br', BR_1M), BR_1M);
    default:
      res.writeHead(404, { 'content-length': '0' });
      res.end();
  }
}

const WORKERS = Math.max(1, Number(process.env.BENCH_SERVER_WORKERS ?? 1) | 0);
if (WORKERS > 1 && cluster.isPrimary) await runPrimary();
else await runServer();

// The cluster's primary: it serves nothing itself, forwards the ports and sums the workers' CPU.
async function runPrimary() {
  const workers = Array.from({ length: WORKERS }, () => cluster.fork());
  const ready = await Promise.all(
    workers.map((w) => new Promise((resolve) => w.on('message', (m) => m?.type === 'ready' && resolve(m)))),
  );
  const { port, httpsPort, h2Port } = ready[0];
  if (process.send) process.send({ type: 'ready', port, httpsPort, h2Port, workers: WORKERS });
  else console.log(port, httpsPort, h2Port);
  if (!process.send) return;
  let nextAsk = 0;
  const answers = new Map();
  for (const w of workers) {
    w.on('message', (m) => {
      if (m?.type !== 'cpu') return;
      const entry = answers.get(m.id);
      if (!entry) return;
      entry.user += m.usage.user;
      entry.system += m.usage.system;
      if (--entry.left === 0) {
        answers.delete(m.id);
        process.send({ type: 'cpu', id: entry.parentId, usage: { user: entry.user, system: entry.system } });
      }
    });
  }
  process.on('message', (msg) => {
    if (msg?.type !== 'cpu') return;
    const id = nextAsk++;
    const own = process.cpuUsage();
    answers.set(id, { parentId: msg.id, left: workers.length, user: own.user, system: own.system });
    for (const w of workers) w.send({ type: 'cpu', id });
  });
  process.on('disconnect', () => {
    for (const w of workers) w.kill();
    process.exit(0);
  });
}

async function runServer() {
  const tlsDir = new URL('../__test__/fixtures/tls/', import.meta.url);
  const server = http.createServer(handle);
  const secure = https.createServer(
    { key: fs.readFileSync(new URL('localhost.key', tlsDir)), cert: fs.readFileSync(new URL('localhost.pem', tlsDir)) },
    handle,
  );
  // HTTP/2 only (no HTTP/1.1 fallback), same routes through the compatibility API.
  const h2 = http2.createSecureServer(
    { key: fs.readFileSync(new URL('localhost.key', tlsDir)), cert: fs.readFileSync(new URL('localhost.pem', tlsDir)) },
    handle,
  );
  // A client dropping a connection mid-handshake must not take the server down.
  secure.on('tlsClientError', () => {});
  h2.on('tlsClientError', () => {});
  h2.on('sessionError', () => {});

  for (const s of [server, secure]) {
    s.keepAliveTimeout = 10 * 60 * 1000; // never close an idle keep-alive connection during a run
    s.maxRequestsPerSocket = 0; // unlimited requests per connection
    // headersTimeout / requestTimeout: Node defaults.
  }

  server.on('upgrade', acceptWebSocketEcho);

  const listen = (s, port) => new Promise((resolve) => s.listen(port, '127.0.0.1', () => resolve(s.address().port)));
  const port = await listen(server, Number(process.argv[2] ?? 0));
  const httpsPort = await listen(secure, Number(process.argv[3] ?? 0));
  const h2Port = await listen(h2, Number(process.argv[4] ?? 0));
  if (process.send) process.send({ type: 'ready', port, httpsPort, h2Port });
  else console.log(port, httpsPort, h2Port);

  if (process.send) {
    process.on('message', (msg) => {
      if (msg && msg.type === 'cpu') process.send({ type: 'cpu', id: msg.id, usage: process.cpuUsage() });
    });
    // The parent went away (crashed, killed, finished): do not linger.
    process.on('disconnect', () => process.exit(0));
  }
}
