// The two engine drivers (issue 20): `inline` ticks the engine's runtime on this thread's event
// loop, `threaded` runs it on a thread of its own. Whichever FERRO_ENGINE picks for the rest of
// the suite, these tests ask for each driver by the `engine` option, and both run side by side.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, Client, WebSocket, errors } from '../ts/index.js';
import { engineDriver, engineKind } from '../ts/native/engine.js';
import { httpServer, rawServer } from './fixtures/servers.js';
import { ca, h2Server } from './fixtures/h2.js';
import { echo, wsServer } from './fixtures/ws-server.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const linux = process.platform === 'linux';
const kinds = ['inline', 'threaded'] as const;
const built = existsSync(fileURLToPath(new URL('../dist/index.js', import.meta.url)));

describe('engine option', () => {
  it('runs the inline driver where the platform has one, else the threaded one', () => {
    expect(engineDriver('inline')).toBe(linux ? 'inline' : 'threaded');
    expect(engineDriver('threaded')).toBe('threaded');
  });

  it('rejects an unknown driver name with InvalidArgumentError', () => {
    expect(() => new Client('http://127.0.0.1:1', { engine: 'fast' as 'inline' })).toThrow(errors.InvalidArgumentError);
    expect(() => engineKind('fast')).toThrow("engine must be 'inline' or 'threaded'");
  });

  it('reaches the pools an Agent makes', async () => {
    const agent = cleanup.track(new Agent({ engine: 'fast' as 'inline' }));
    await expect(agent.request({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET' })).rejects.toThrow(errors.InvalidArgumentError);
  });

  it('takes FERRO_ENGINE when no option is given', () => {
    const before = process.env.FERRO_ENGINE;
    try {
      process.env.FERRO_ENGINE = 'threaded';
      expect(engineKind()).toBe('threaded');
      process.env.FERRO_ENGINE = 'inline';
      expect(engineKind()).toBe('inline');
      expect(engineKind('threaded')).toBe('threaded');
    } finally {
      if (before === undefined) delete process.env.FERRO_ENGINE;
      else process.env.FERRO_ENGINE = before;
    }
  });

  it('without FERRO_ENGINE, picks inline on Linux with two cores or fewer, threaded otherwise', () => {
    const before = process.env.FERRO_ENGINE;
    try {
      delete process.env.FERRO_ENGINE;
      expect(engineKind()).toBe(process.platform === 'linux' && availableParallelism() <= 2 ? 'inline' : 'threaded');
      process.env.FERRO_ENGINE = 'bogus'; // not a driver name: the machine's default, as when unset
      expect(engineKind()).toBe(process.platform === 'linux' && availableParallelism() <= 2 ? 'inline' : 'threaded');
    } finally {
      if (before === undefined) delete process.env.FERRO_ENGINE;
      else process.env.FERRO_ENGINE = before;
    }
  });
});

describe.each(kinds)('%s driver', (engine) => {
  it('serves requests, one at a time and many at once', async () => {
    const srv = cleanup.track(await httpServer((req, res) => res.end(`got ${req.url}`)));
    const client = cleanup.track(new Client(srv.origin, { engine }));
    expect(await (await client.request({ path: '/one', method: 'GET' })).body.text()).toBe('got /one');
    const many = await Promise.all(
      Array.from({ length: 64 }, (_, i) => client.request({ path: `/${i}`, method: 'GET' }).then((r) => r.body.text())),
    );
    expect(many).toEqual(Array.from({ length: 64 }, (_, i) => `got /${i}`));
  });

  it('fires a timer with no I/O at all: headersTimeout on a silent server', async () => {
    const srv = cleanup.track(await rawServer(() => {}));
    const client = cleanup.track(new Client(srv.origin, { engine, headersTimeout: 150 }));
    const started = Date.now();
    await expect(client.request({ path: '/', method: 'GET' })).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('resolves a host name (DNS) before connecting', async () => {
    const srv = cleanup.track(await httpServer((_req, res) => res.end('named')));
    const { port } = srv.server.address() as AddressInfo;
    const client = cleanup.track(new Client(`http://localhost:${port}`, { engine }));
    expect(await (await client.request({ path: '/', method: 'GET' })).body.text()).toBe('named');
  });

  it('runs over a bridged Node socket (custom connect)', async () => {
    const srv = cleanup.track(await httpServer((req, res) => res.end(`bridged ${req.url}`)));
    const { port } = srv.server.address() as AddressInfo;
    const client = cleanup.track(
      new Client(srv.origin, {
        engine,
        connect: (_opts, cb) => {
          const s = netConnect(port, '127.0.0.1');
          s.once('connect', () => cb(null, s));
          s.once('error', (err) => cb(err, null));
        },
      }),
    );
    const bodies = await Promise.all(
      [1, 2, 3].map((i) => client.request({ path: `/${i}`, method: 'GET' }).then((r) => r.body.text())),
    );
    expect(bodies).toEqual(['bridged /1', 'bridged /2', 'bridged /3']);
  });

  it('speaks HTTP/2 over TLS, many streams on one session', async () => {
    const srv = await h2Server((stream, headers) => {
      stream.respond({ ':status': 200 });
      stream.end(`h2 ${headers[':path']}`);
    });
    cleanup.push(() => srv.close());
    const client = cleanup.track(new Client(srv.origin, { engine, connect: { ca } }));
    const bodies = await Promise.all(
      [1, 2, 3, 4].map((i) => client.request({ path: `/${i}`, method: 'GET' }).then((r) => r.body.text())),
    );
    expect(bodies).toEqual(['h2 /1', 'h2 /2', 'h2 /3', 'h2 /4']);
    expect(srv.sessions.length).toBe(1);
  });

  it('aborts a request whose response never comes', async () => {
    const srv = cleanup.track(await rawServer(() => {}));
    const client = cleanup.track(new Client(srv.origin, { engine }));
    const ac = new AbortController();
    const pending = client.request({ path: '/', method: 'GET', signal: ac.signal });
    setImmediate(() => ac.abort());
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('carries a WebSocket', async () => {
    const srv = cleanup.track(await wsServer((peer) => void echo(peer)));
    const agent = cleanup.track(new Agent({ engine }));
    const ws = new WebSocket(srv.ws, { dispatcher: agent });
    await once(ws, 'open');
    ws.send('ping me');
    const [msg] = (await once(ws, 'message')) as [MessageEvent];
    expect(msg.data).toBe('ping me');
    ws.close();
    await once(ws, 'close');
  });
});

describe('both drivers at once', () => {
  it('route each request and bridged socket to its own engine', async () => {
    const srv = cleanup.track(await httpServer((req, res) => res.end(`got ${req.url}`)));
    const { port } = srv.server.address() as AddressInfo;
    const connect = (_opts: unknown, cb: (err: Error | null, s: ReturnType<typeof netConnect> | null) => void): void => {
      const s = netConnect(port, '127.0.0.1');
      s.once('connect', () => cb(null, s));
      s.once('error', (err) => cb(err, null));
    };
    const clients = [
      new Client(srv.origin, { engine: 'inline' }),
      new Client(srv.origin, { engine: 'threaded' }),
      new Client(srv.origin, { engine: 'inline', connect }),
      new Client(srv.origin, { engine: 'threaded', connect }),
    ].map((c) => cleanup.track(c));
    const bodies = await Promise.all(
      clients.flatMap((c, i) => [0, 1].map((j) => c.request({ path: `/${i}/${j}`, method: 'GET' }).then((r) => r.body.text()))),
    );
    expect(bodies).toEqual(clients.flatMap((_, i) => [`got /${i}/0`, `got /${i}/1`]));
  });
});

describe.skipIf(!built || !linux)('inline driver and process liveness', () => {
  it('exits on its own when only idle kept-alive sockets remain', async () => {
    const srv = cleanup.track(await httpServer((_req, res) => res.end('got /')));
    const script = fileURLToPath(new URL('./fixtures/workers/idle-exit.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, srv.origin, 'idle'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, FERRO_ENGINE: 'inline' },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(out).toBe('got /\n');
    expect(code).toBe(0);
  });
});
