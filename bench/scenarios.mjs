// The bench's contenders and scenarios (bench/run.mjs runs them; bench/README.md describes them).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The APIs and consumers every library offers (bench/contenders.mjs): `ferro-<api>` / `undici-<api>`.
export const API_NAMES = ['request', 'request-text', 'request-dump', 'request-iter', 'stream', 'dispatch', 'fetch'];
const both = (apis) => ['ferro', 'undici'].flatMap((lib) => apis.map((api) => `${lib}-${api}`));

export const DEFAULT_CONTENDERS = [
  'ferro-request',
  'ferro-dispatch',
  'ferro-fetch',
  'undici-request',
  'undici-dispatch',
  'undici-fetch',
  'node-http',
];
// fetch is measured where it is a throughput question; new connections and latency compare the transports.
const isFetch = (c) => c.endsWith('-fetch');
const WEBSOCKET_CONTENDERS = ['ferro-websocket', 'undici-websocket'];
// request() + arrayBuffer() over one protocol (the suffix), against crates/h3-test-server --bench.
const H3_CONTENDERS = ['ferro-request-h3', 'ferro-request-h2', 'undici-request-h2', 'undici-request-h1'];
// ferro-inline-<api> / ferro-threaded-<api>: a ferro contender with FERRO_ENGINE set for its process.
const DRIVER_CONTENDERS = ['inline', 'threaded'].flatMap((d) => API_NAMES.map((api) => `ferro-${d}-${api}`));
export const driverOf = (c) => /^ferro-(inline|threaded)-/.exec(c)?.[1] ?? null;
export const ALL_CONTENDERS = [
  ...new Set([
    ...DEFAULT_CONTENDERS,
    ...both(API_NAMES),
    ...DRIVER_CONTENDERS,
    // ferro's request API over Node sockets from a custom connector (the bridged transport).
    'ferro-bridged',
    // request() reading every field of res.timings: what reading them costs, against ferro-request.
    'ferro-request-timings',
    // request() through composed retry + redirect interceptors.
    'ferro-interceptors',
    'undici-interceptors',
    ...WEBSOCKET_CONTENDERS,
    ...H3_CONTENDERS,
  ]),
];

/** undici's same API, which a contender's ratios compare with. */
export function baselineOf(c) {
  // undici has no HTTP/3: the protocol rows compare with its h2.
  if (/-h[123]$/.test(c)) return 'undici-request-h2';
  if (c === 'node-http' || c === 'ferro-bridged' || c === 'ferro-request-timings') return 'undici-request';
  return c.replace(/^ferro-(inline-|threaded-)?/, 'undici-');
}

const THROUGHPUT = { mode: 'throughput', concurrency: 100, connections: 50, pipelining: 10 };
const NEW_CONNECTIONS = {
  mode: 'throughput',
  noFetch: true,
  concurrency: 10,
  connections: 10,
  pipelining: 1,
  secure: true,
  reset: true,
  path: '/small',
  expectBytes: 12,
};
const CACHE_HIT = { mode: 'latency', concurrency: 1, connections: 1, pipelining: 1, path: '/cacheable', expectBytes: 12, interceptor: 'cache' };
// crates/h3-test-server --bench: QUIC and TLS on one port, 100 in flight. h2 and h3 on one
// connection; undici's h1 on the usual Pool of 50 connections × pipelining 10 (h1 has no multiplexing).
const H3 = { ...THROUGHPUT, secure: true, h3Server: true, connections: 1, h1Connections: 50, contenders: H3_CONTENDERS, ownContenders: true };
const WEBSOCKET = { mode: 'throughput', concurrency: 16, connections: 1, pipelining: 1, path: '/ws', contenders: WEBSOCKET_CONTENDERS, ownContenders: true };
// The https server's certificate (localhost, 127.0.0.1) is signed by the test CA.
export const CA_FILE = path.join(ROOT, '__test__', 'fixtures', 'tls', 'ca.pem');
export const SCENARIOS = {
  small: { ...THROUGHPUT, path: '/small', expectBytes: 12, title: 'small body (12 B)' },
  '64k': { ...THROUGHPUT, path: '/64k', expectBytes: 65536, title: '64 KiB body' },
  // The other ways to consume a response (request + text / dump / for await, stream), as `small`.
  consumers: { ...THROUGHPUT, noNode: true, contenders: both(['request-text', 'request-dump', 'request-iter', 'stream']), path: '/small', expectBytes: 12, title: 'small body, other consumers' },
  // blocking: false: up to 10 requests pipelined per connection, every API and consumer.
  pipelined: { ...THROUGHPUT, blocking: false, noNode: true, contenders: both(API_NAMES), path: '/small', expectBytes: 12, title: 'small body, blocking: false (pipelined)' },
  '64k-pipelined': { ...THROUGHPUT, blocking: false, noNode: true, contenders: both(['request', 'request-dump', 'dispatch']), path: '/64k', expectBytes: 65536, title: '64 KiB body, blocking: false (pipelined)' },
  https: { ...THROUGHPUT, secure: true, path: '/small', expectBytes: 12, title: 'https keep-alive, small body' },
  // Every request on a new TLS connection (`reset: true`; node-http: an agent without keep-alive):
  // req/s is new connections per second.
  'new-connections': { ...NEW_CONNECTIONS, title: 'a new TLS connection per request, sessions resumed' },
  'new-connections-no-resume': {
    ...NEW_CONNECTIONS,
    maxCachedSessions: 0,
    title: 'a new TLS connection per request, maxCachedSessions: 0',
  },
  // HTTP/2 over TLS: 100 in flight over one session (Pool of 1 connection, allowH2).
  h2: { ...THROUGHPUT, secure: true, h2: true, connections: 1, noFetch: true, noNode: true, path: '/small', expectBytes: 12, title: 'h2, one session, small body' },
  'h2-64k': { ...THROUGHPUT, secure: true, h2: true, connections: 1, noFetch: true, noNode: true, path: '/64k', expectBytes: 65536, title: 'h2, one session, 64 KiB body' },
  // HTTP/3 (ferro, prior knowledge) against HTTP/2 (ferro, undici) and HTTP/1.1 (undici), one server.
  h3: { ...H3, path: '/small', expectBytes: 12, title: 'h3 / h2 / h1 on one server, small body' },
  'h3-64k': { ...H3, path: '/64k', expectBytes: 65536, title: 'h3 / h2 / h1 on one server, 64 KiB body' },
  // HTTP/2 without TLS (prior knowledge) through H2CClient, 100 streams on one connection: the
  // Rust server only (node:http has no h2c listener here).
  h2c: { ...THROUGHPUT, h2c: true, rustOnly: true, noFetch: true, noNode: true, connections: 1, pipelining: 100, path: '/small', expectBytes: 12, title: 'h2c, one connection, small body' },
  'h2c-64k': { ...THROUGHPUT, h2c: true, rustOnly: true, noFetch: true, noNode: true, connections: 1, pipelining: 100, path: '/64k', expectBytes: 65536, title: 'h2c, one connection, 64 KiB body' },
  // Peak RSS of the client process with 10,000 requests in flight on Pool 50 × pipelining 10.
  memory: { ...THROUGHPUT, noFetch: true, concurrency: 10_000, path: '/small', expectBytes: 12, title: 'peak RSS, 10,000 in flight' },
  // 100 in flight for one cacheable URL through interceptors.cache() (the default memory store):
  // after the first response every request is served from the cache.
  // Every contender starts its next request from setImmediate (yieldEach): undici serves hits in
  // microtasks, and a completion-driven chain of them would never let the window's timer fire.
  cache: {
    ...THROUGHPUT,
    path: '/cacheable',
    expectBytes: 12,
    interceptor: 'cache',
    yieldEach: true,
    title: 'one cacheable URL through interceptors.cache()',
  },
  // WebSocket echo on one connection, 16 messages in flight: "req/s" is echoed messages per second.
  'ws-100': { ...WEBSOCKET, expectBytes: 100, title: 'WebSocket echo, 100 B messages' },
  'ws-64k': { ...WEBSOCKET, expectBytes: 65536, title: 'WebSocket echo, 64 KiB messages' },
  // 1 MiB decoded bodies through interceptors.decompress: 10 in flight on 10 connections.
  'decompress-gzip': {
    ...THROUGHPUT,
    concurrency: 10,
    connections: 10,
    pipelining: 1,
    interceptor: 'decompress',
    path: '/gzip-1m',
    expectBytes: 1024 * 1024,
    title: '1 MiB gzip body through decompress',
  },
  'decompress-br': {
    ...THROUGHPUT,
    concurrency: 10,
    connections: 10,
    pipelining: 1,
    interceptor: 'decompress',
    path: '/br-1m',
    expectBytes: 1024 * 1024,
    title: '1 MiB br body through decompress',
  },
  // A response that sets a cookie, with interceptors.cookies (a jar holding 3 cookies for the
  // origin, so each request also sends a cookie header) and without: ferro only (undici has no jar).
  cookies: { ...THROUGHPUT, ferroOnly: true, path: '/set-cookie', expectBytes: 12, interceptor: 'cookies', title: '/set-cookie through cookies' },
  'cookies-off': { ...THROUGHPUT, ferroOnly: true, noFetch: true, withOrigin: true, path: '/set-cookie', expectBytes: 12, title: '/set-cookie without cookies' },
  // An Agent to http://localhost:<port>, with interceptors.dns and without.
  dns: { ...THROUGHPUT, agent: true, host: 'localhost', interceptor: 'dns', path: '/small', expectBytes: 12, title: 'localhost through dns' },
  'dns-off': { ...THROUGHPUT, agent: true, host: 'localhost', path: '/small', expectBytes: 12, title: 'localhost without dns' },
  // As `small` through an Agent (same address): its cost over `small` is the Agent's per-request routing.
  agent: { ...THROUGHPUT, agent: true, path: '/small', expectBytes: 12, title: 'Agent to 127.0.0.1, small body' },
  // As `agent` with maxGlobalConnections equal to the Pool's connections (never reached): the cap's
  // own cost per request (ferro only; undici has no cap).
  'agent-cap': { ...THROUGHPUT, agent: true, ferroOnly: true, noFetch: true, maxGlobalConnections: 50, path: '/small', expectBytes: 12, title: 'Agent with maxGlobalConnections: 50' },
  // One request at a time for one cacheable URL: after the first, every request is a cache hit.
  // The memory store's hit against RedisCacheStore's (a redis-server on loopback; ferro only).
  'cache-hit': { ...CACHE_HIT, title: 'cache hit, memory store' },
  'cache-hit-redis': { ...CACHE_HIT, redis: true, ferroOnly: true, title: 'cache hit, RedisCacheStore (loopback redis-server)' },
  latency: {
    mode: 'latency',
    noFetch: true,
    concurrency: 1,
    connections: 1,
    pipelining: 1,
    path: '/small',
    expectBytes: 12,
    title: '1 request in flight, 1 connection, small body',
  },
};

/** The paths crates/bench-server answers: scenarios on them run against `--server=rust` too. */
const RUST_PATHS = new Set(['/small', '/64k', '/cacheable', '/set-cookie']);
export const rustServes = (sc) => !sc.secure && !sc.h2 && RUST_PATHS.has(sc.path);
/** The server a scenario runs against besides the --server list: crates/h3-test-server for h3 rows. */
export const ownServer = (sc) => (sc.h3Server ? 'h3' : null);
/** What the Rust server runs by default: the rows that say what the client itself costs. */
export const RUST_SCENARIOS = ['small', 'consumers', 'pipelined', '64k', '64k-pipelined', 'h2c', 'h2c-64k', 'latency'];

/**
 * A scenario's contenders: its own set (WebSocket echo always; the consumer scenarios unless the run
 * names its contenders), else the run's, less those the scenario leaves out.
 */
export function contendersOf(sc, chosen, named) {
  if (sc.contenders && (sc.ownContenders || !named)) return sc.contenders;
  return chosen.filter(
    (c) =>
      // node:http has no interceptors; fetch brings its own decoding and is measured on plain scenarios.
      !(isFetch(c) && (sc.noFetch || sc.interceptor)) &&
      !(c === 'node-http' && (sc.noNode || sc.interceptor)) &&
      !(sc.ferroOnly && !c.startsWith('ferro')) &&
      !(c.endsWith('-websocket') && !sc.ownContenders),
  );
}

export const DEFAULT_SCENARIOS = [
  'small',
  '64k',
  'consumers',
  'pipelined',
  '64k-pipelined',
  'https',
  'h2',
  'h2-64k',
  'h3',
  'h3-64k',
  'h2c',
  'h2c-64k',
  'new-connections',
  'new-connections-no-resume',
  'cache',
  'latency',
  'memory',
  'ws-100',
  'ws-64k',
  'decompress-gzip',
  'decompress-br',
  'dns',
  'dns-off',
  'agent',
  'agent-cap',
  'cookies',
  'cookies-off',
  'cache-hit',
  'cache-hit-redis',
];
