// The contenders of a bench turn (bench/client.mjs): each is { lib: { name, version }, issue(cb), close() },
// where issue(cb) starts one request and calls cb(err, statusCode, bodyBytes) once the body is consumed.
//
// ferro and undici run the same code against the same API; the name says which API and which consumer:
//   <lib>-request         request() + body.arrayBuffer()
//   <lib>-request-text    request() + body.text()
//   <lib>-request-dump    request() + body.dump() (bytes taken from content-length: dump discards them)
//   <lib>-request-iter    request() + for await (const chunk of body)
//   ferro-request-timings request() + body.arrayBuffer(), then reads every field of res.timings
//   <lib>-stream          stream() into a Writable per request
//   <lib>-dispatch        dispatch() with a minimal controller handler that counts body bytes
//   <lib>-fetch           fetch(url, { dispatcher }) + res.arrayBuffer()
//   <lib>-bridged, -interceptors, -websocket, node-http: see bench/README.md.
//   <lib>-request-h1 / -h2 / -h3  request() + arrayBuffer() over that protocol only (the h3 rows)
// With cfg.blocking === false every request is sent with `blocking: false` (fetch: through a dispatcher
// composed to add it), so pipelined requests go out without waiting for the previous response's head.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

function readVersion(pkgJsonPath) {
  try {
    return JSON.parse(fs.readFileSync(pkgJsonPath, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

async function loadFerro(cfg) {
  const file = fileURLToPath(cfg.ferroUrl);
  if (!fs.existsSync(file)) throw new Error(`ferro not built: ${file} does not exist (run npm run build)`);
  const mod = await import(cfg.ferroUrl);
  if (typeof mod.Pool !== 'function') throw new Error('ferro dist/index.js does not export Pool');
  const version = readVersion(new URL('../package.json', new URL('.', cfg.ferroUrl)));
  return { mod, lib: { name: 'ferro', version } };
}

async function loadUndici(cfg) {
  const mod = await import(cfg.undiciPkg);
  const version = readVersion(new URL(`../node_modules/${cfg.undiciPkg}/package.json`, import.meta.url));
  return { mod, lib: { name: cfg.undiciPkg, version } };
}

// TLS options as both libraries take them in `connect`.
function tlsOptions(cfg) {
  if (!cfg.caFile) return null;
  const ca = fs.readFileSync(cfg.caFile, 'utf8');
  return { ca, ...(cfg.maxCachedSessions != null ? { maxCachedSessions: cfg.maxCachedSessions } : null) };
}

// A contender named for a protocol (…-h1 / -h2 / -h3): the options that pin it.
const PROTOCOLS = {
  h1: (cfg) => ({ allowH2: false, connections: cfg.h1Connections ?? cfg.connections }),
  h2: () => ({ allowH2: true }),
  // Straight to QUIC: no TCP connection, no Alt-Svc discovery.
  h3: () => ({ allowH3: true, h3Options: { priorKnowledge: true } }),
};

function poolOptions(cfg) {
  const tls = tlsOptions(cfg);
  return {
    connections: cfg.connections,
    pipelining: cfg.pipelining,
    // Both libraries negotiate h2 through ALPN when asked (undici 7 only on request).
    allowH2: cfg.h2 === true,
    ...(cfg.protocol ? PROTOCOLS[cfg.protocol](cfg) : null),
    ...(tls ? { connect: tls } : null),
    ...(cfg.maxGlobalConnections ? { maxGlobalConnections: cfg.maxGlobalConnections } : null),
  };
}

// Agents and interceptors get the origin in each request (undici 7's cache skips requests without one).
const requestOptions = (cfg) => ({
  path: cfg.path,
  method: 'GET',
  ...(cfg.agent || cfg.interceptor || cfg.withOrigin ? { origin: cfg.origin } : null),
  ...(cfg.reset ? { reset: true } : null),
  ...(cfg.blocking === false ? { blocking: false } : null),
});

// The scenario's interceptor; cookies gets a jar already holding 3 cookies for the origin.
function interceptorFor(mod, cfg) {
  if (cfg.interceptor === 'cache' && cfg.redisUrl) {
    return mod.interceptors.cache({ store: new mod.cacheStores.RedisCacheStore({ url: cfg.redisUrl, keyPrefix: `bench${process.pid}:` }) });
  }
  if (cfg.interceptor !== 'cookies') return mod.interceptors[cfg.interceptor]();
  const jar = new mod.CookieJar();
  for (const c of ['theme=dark', 'lang=en; Path=/', 'consent=yes; Max-Age=3600']) jar.setCookie(c, cfg.origin);
  return mod.interceptors.cookies({ jar });
}

// The dispatcher a contender drives: a Pool (or an Agent), composed with the scenario's interceptor.
function makeDispatcher(mod, cfg, extra = {}) {
  const opts = { ...poolOptions(cfg), ...extra };
  // h2c: one HTTP/2 connection without TLS, `pipelining` streams at once.
  const base = cfg.h2c
    ? new mod.H2CClient(cfg.origin, { pipelining: cfg.pipelining, maxConcurrentStreams: cfg.pipelining })
    : cfg.agent
      ? new mod.Agent(opts)
      : new mod.Pool(cfg.origin, opts);
  const composed = cfg.interceptor ? base.compose(interceptorFor(mod, cfg)) : base;
  return { dispatcher: composed, close: () => base.close() };
}

// How a request() contender reads the body: each returns the bytes consumed.
const CONSUMERS = {
  // arrayBuffer() reads every byte without a text decode, so 64 KiB measures transport, not UTF-8.
  arrayBuffer: async (res) => (await res.body.arrayBuffer()).byteLength,
  // The bench bodies are ASCII: the string's length is the byte count.
  text: async (res) => (await res.body.text()).length,
  dump: async (res) => {
    await res.body.dump();
    return Number(res.headers['content-length']);
  },
  iter: async (res) => {
    let bytes = 0;
    for await (const chunk of res.body) bytes += chunk.length;
    return bytes;
  },
  // ferro's request timings, every field read (what reading them costs, against ferro-request).
  timings: async (res) => {
    const bytes = (await res.body.arrayBuffer()).byteLength;
    const t = res.timings;
    const total = t.queued + t.dns + t.connect + t.tls + t.requestSent + t.firstByte + t.end;
    if (!(total > 0 && t.end >= t.firstByte)) throw new Error('request timings missing');
    return bytes;
  },
};

/** An issue(cb) over an async function returning [status, bytes]. */
const issuing = (one) => (cb) => {
  one().then(
    ([status, bytes]) => cb(null, status, bytes),
    (err) => cb(err),
  );
};

// What users write: await the response, then consume the whole body.
function requestContender({ mod, lib }, cfg, consumer = 'arrayBuffer', extra = {}, wrap = (pool) => pool) {
  const { dispatcher: pool, close } = makeDispatcher(mod, cfg, extra);
  const target = wrap(pool);
  const opts = requestOptions(cfg);
  const consume = CONSUMERS[consumer];
  return {
    lib,
    issue: issuing(async () => {
      const res = await target.request(opts);
      return [res.statusCode, await consume(res)];
    }),
    close,
  };
}

// stream(): the factory returns a Writable that counts what it is given.
function streamContender({ mod, lib }, cfg) {
  const { dispatcher: pool, close } = makeDispatcher(mod, cfg);
  const base = requestOptions(cfg);
  const factory = ({ statusCode, opaque }) => {
    opaque.status = statusCode;
    return new Writable({
      write(chunk, _encoding, callback) {
        opaque.bytes += chunk.length;
        callback();
      },
    });
  };
  return {
    lib,
    issue: issuing(async () => {
      const sink = { status: 0, bytes: 0 };
      await pool.stream({ ...base, opaque: sink }, factory);
      return [sink.status, sink.bytes];
    }),
    close,
  };
}

// A minimal controller-based dispatch handler that counts body bytes.
class CountingHandler {
  constructor(cb) {
    this.cb = cb;
    this.status = 0;
    this.bytes = 0;
  }
  onRequestStart(_controller, _context) {}
  onResponseStart(_controller, statusCode, _headers, _statusMessage) {
    this.status = statusCode;
  }
  onResponseData(_controller, chunk) {
    this.bytes += chunk.length;
  }
  onResponseEnd(_controller, _trailers) {
    const cb = this.cb;
    this.cb = null;
    if (cb) cb(null, this.status, this.bytes);
  }
  onResponseError(_controller, err) {
    const cb = this.cb;
    this.cb = null;
    if (cb) cb(err);
  }
}

function dispatchContender({ mod, lib }, cfg) {
  const { dispatcher: pool, close } = makeDispatcher(mod, cfg);
  const opts = { origin: cfg.origin, ...requestOptions(cfg) };
  return {
    lib,
    issue(cb) {
      try {
        // A `false` return only means "busy": the request is queued and will still complete.
        pool.dispatch(opts, new CountingHandler(cb));
      } catch (err) {
        cb(err);
      }
    },
    close,
  };
}

// WHATWG fetch with the library's Pool as its dispatcher; arrayBuffer() reads the whole body. fetch
// has no `blocking` option: with blocking false the Pool is composed with an interceptor adding it.
function fetchContender({ mod, lib }, cfg) {
  if (typeof mod.fetch !== 'function') throw new Error(`${lib.name} does not export fetch`);
  const pool = new mod.Pool(cfg.origin, poolOptions(cfg));
  const dispatcher = cfg.blocking === false ? pool.compose((dispatch) => (opts, handler) => dispatch({ ...opts, blocking: false }, handler)) : pool;
  const url = new URL(cfg.path, cfg.origin).href;
  const init = { dispatcher, ...(cfg.reset ? { headers: { connection: 'close' } } : null) };
  return {
    lib,
    issue: issuing(async () => {
      const res = await mod.fetch(url, init);
      const ab = await res.arrayBuffer();
      return [res.status, ab.byteLength];
    }),
    close: () => pool.close(),
  };
}

// Any function other than buildConnector's own result makes ferro connect through it (bridged).
async function bridgedContender(loaded, cfg) {
  let build = loaded.mod.buildConnector;
  // Builds from before the export: the connector module itself.
  if (typeof build !== 'function') build = (await import(new URL('./core/connector.js', cfg.ferroUrl))).buildConnector;
  const connector = build(tlsOptions(cfg) ?? {});
  return requestContender(loaded, cfg, 'arrayBuffer', { connect: (opts, cb) => connector(opts, cb) });
}

// request() through the usual production stack: retry and redirect interceptors composed.
function interceptorsContender(loaded, cfg) {
  const { interceptors } = loaded.mod;
  return requestContender(loaded, cfg, 'arrayBuffer', {}, (pool) =>
    pool.compose(interceptors.retry(), interceptors.redirect({ maxRedirections: 3 })),
  );
}

function nodeHttpContender(cfg) {
  const url = new URL(cfg.origin);
  const maxSockets = cfg.connections;
  const secure = url.protocol === 'https:';
  const mod = secure ? https : http;
  const agent = new mod.Agent({ keepAlive: !cfg.reset, maxSockets, ...(tlsOptions(cfg) ?? {}) });
  // Without keep-alive an agent still hands a finished socket to a queued request; `connection:
  // close` makes each socket serve one request.
  const headers = cfg.reset ? { connection: 'close' } : undefined;
  const opts = { agent, host: url.hostname, port: url.port, path: cfg.path, method: 'GET', headers };
  return {
    lib: { name: secure ? 'node:https' : 'node:http', version: process.versions.node },
    issue(cb) {
      let done = false;
      const finish = (err, status, bytes) => {
        if (done) return;
        done = true;
        cb(err, status, bytes);
      };
      const req = mod.request(opts, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
        });
        res.on('end', () => finish(null, res.statusCode, bytes));
        res.on('error', (err) => finish(err));
      });
      req.on('error', (err) => finish(err));
      req.end();
    },
    close: () => agent.destroy(),
  };
}

// One WebSocket to the server's echo endpoint; issue() sends one message and completes when its echo
// arrives (echoes come back in order on the one connection).
async function websocketContender({ mod, lib }, cfg) {
  const ws = new mod.WebSocket(cfg.origin.replace(/^http/, 'ws') + cfg.path);
  ws.binaryType = 'arraybuffer';
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = (e) => reject(e.error ?? new Error('WebSocket failed to open'));
  });
  const waiting = [];
  let head = 0;
  ws.onmessage = (e) => {
    const cb = waiting[head];
    waiting[head++] = undefined;
    if (head > 4096 && head * 2 > waiting.length) {
      waiting.splice(0, head);
      head = 0;
    }
    cb?.(null, 200, e.data.byteLength);
  };
  ws.onclose = (e) => {
    const err = new Error(`WebSocket closed (${e.code})`);
    while (head < waiting.length) waiting[head++]?.(err);
  };
  const payload = Buffer.alloc(cfg.expectBytes, 120);
  return {
    lib,
    issue(cb) {
      waiting.push(cb);
      ws.send(payload);
    },
    close: () =>
      new Promise((resolve) => {
        ws.onclose = resolve;
        ws.close();
      }),
  };
}

// The API part of a contender name (after `ferro-` / `undici-`) and how to build it.
const APIS = {
  request: (loaded, cfg) => requestContender(loaded, cfg, 'arrayBuffer'),
  'request-text': (loaded, cfg) => requestContender(loaded, cfg, 'text'),
  'request-dump': (loaded, cfg) => requestContender(loaded, cfg, 'dump'),
  'request-iter': (loaded, cfg) => requestContender(loaded, cfg, 'iter'),
  'request-timings': (loaded, cfg) => requestContender(loaded, cfg, 'timings'),
  stream: streamContender,
  dispatch: dispatchContender,
  fetch: fetchContender,
  interceptors: interceptorsContender,
  websocket: websocketContender,
};

/** The contender `cfg.contender` names, loaded and ready to issue requests. */
export async function makeContender(cfg) {
  const name = cfg.contender;
  if (name === 'node-http') return nodeHttpContender(cfg);
  if (name === 'ferro-bridged') return bridgedContender(await loadFerro(cfg), cfg);
  const m = /^(ferro|undici)-(.+?)(?:-(h[123]))?$/.exec(name);
  const build = m && APIS[m[2]];
  if (!build) throw new Error(`unknown contender: ${name}`);
  return build(m[1] === 'ferro' ? await loadFerro(cfg) : await loadUndici(cfg), m[3] ? { ...cfg, protocol: m[3] } : cfg);
}
