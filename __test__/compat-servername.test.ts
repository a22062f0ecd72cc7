// A request's own `servername` (TLS SNI) on a Client or Pool, as undici (issue 35 item 15): a
// connection verified for one name never carries a request for another. Once the requests under
// way are done, the connection ends ('disconnect' with InformationalError 'servername changed')
// and the next one is made for the new name; requests keep their order.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:https';
import { connect as connectTls, createSecureContext, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, Pool, errors, type Dispatcher } from '../ts/index.js';
import type { Connector } from '../ts/core/connector.js';
import { Cleanup } from './fixtures/h1.js';
import { httpServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const tls = (name: string): Buffer => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url));
const ca = tls('ca.pem');

/** An https server holding certificates for localhost and other.test; each answer names the SNI it came over. */
async function sniServer(): Promise<{ origin: string; snis: string[] }> {
  const contexts: Record<string, ReturnType<typeof createSecureContext>> = {
    localhost: createSecureContext({ key: tls('localhost.key'), cert: tls('localhost.pem') }),
    'other.test': createSecureContext({ key: tls('other.key'), cert: tls('other.pem') }),
  };
  const snis: string[] = [];
  const server = createServer(
    {
      key: tls('localhost.key'),
      cert: tls('localhost.pem'),
      SNICallback: (name, cb) => cb(null, contexts[name] ?? contexts.localhost),
    },
    (req, res) => res.end(String((req.socket as TLSSocket).servername)),
  );
  server.on('secureConnection', (s: TLSSocket) => snis.push(String(s.servername)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.defer(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { origin: `https://localhost:${(server.address() as AddressInfo).port}`, snis };
}

async function text(d: Dispatcher, servername?: string): Promise<string> {
  const { body } = await d.request({ path: '/', method: 'GET', ...(servername ? { servername } : {}) });
  return body.text();
}

describe('a per-request servername', () => {
  // A Pool may open a connection per request it runs at once: its names come in runs.
  for (const [kind, make] of [
    ['Client', (origin: string) => new Client(origin, { connect: { ca } })],
    ['Pool', (origin: string) => new Pool(origin, { connect: { ca }, connections: 2 })],
  ] as const) {
    it(`${kind}: each request goes over a connection made for its name, in order`, async () => {
      const { origin, snis } = await sniServer();
      const d = cleanup.add(make(origin));
      const disconnects: Error[] = [];
      d.on('disconnect', (_o: URL, _t: readonly Dispatcher[], err: Error) => disconnects.push(err));
      expect(await text(d)).toBe('localhost');
      // Dispatched together: the switch waits for the requests before it, and those after wait for it.
      const answers = await Promise.all([text(d), text(d, 'other.test'), text(d, 'other.test'), text(d, 'localhost')]);
      expect(answers).toEqual(['localhost', 'other.test', 'other.test', 'localhost']);
      const runs = snis.filter((name, i) => name !== snis[i - 1]);
      expect(runs).toEqual(['localhost', 'other.test', 'localhost']);
      if (kind === 'Client') expect(snis).toHaveLength(3);
      // One per connection that ended for a switch (a Pool's may have more than one).
      const changed = disconnects.filter((e) => e.message === 'servername changed');
      if (kind === 'Client') expect(changed).toHaveLength(2);
      else expect(changed.length).toBeGreaterThanOrEqual(2);
      for (const e of changed) expect(e).toBeInstanceOf(errors.InformationalError);
    });
  }

  it('close() sends the held requests first; destroy() fails them; an aborted one is skipped', async () => {
    const { origin, snis } = await sniServer();
    const a = cleanup.add(new Client(origin, { connect: { ca } }));
    const ac = new AbortController();
    const first = text(a);
    const aborted = a.request({ path: '/', method: 'GET', servername: 'other.test', signal: ac.signal });
    const held = text(a, 'other.test');
    ac.abort();
    await expect(aborted).rejects.toThrow();
    const closed = a.close();
    expect(await Promise.all([first, held])).toEqual(['localhost', 'other.test']);
    await closed;
    expect(snis).toEqual(['localhost', 'other.test']);

    const b = cleanup.add(new Client(origin, { connect: { ca } }));
    const running = text(b).catch((e: unknown) => e);
    const waiting = text(b, 'other.test').catch((e: unknown) => e);
    await b.destroy();
    expect(await running).toBeInstanceOf(errors.ClientDestroyedError);
    expect(await waiting).toBeInstanceOf(errors.ClientDestroyedError);
  });

  it('a custom connect is passed the name of each connection it makes', async () => {
    const { origin, snis } = await sniServer();
    const asked: (string | undefined)[] = [];
    const connect: Connector = (opts, callback) => {
      asked.push(opts.servername);
      const socket = connectTls({ host: '127.0.0.1', port: Number(opts.port), servername: opts.servername, ca }, () =>
        callback(null, socket),
      );
      socket.on('error', (err) => callback(err, null));
      return socket;
    };
    const client = cleanup.add(new Client(origin, { connect }));
    const changed: Error[] = [];
    client.on('disconnect', (_o: URL, _t: readonly Dispatcher[], err: Error) => changed.push(err));
    expect(await text(client)).toBe('localhost');
    expect(await text(client, 'other.test')).toBe('other.test');
    expect(asked).toEqual(['localhost', 'other.test']);
    expect(snis).toEqual(['localhost', 'other.test']);
    expect(changed.map((e) => e.message)).toEqual(['servername changed']);
  });

  it('a plain-http origin ignores it', async () => {
    const srv = cleanup.add(await httpServer((_req, res) => res.end('ok')));
    const client = cleanup.add(new Client(srv.origin));
    const disconnects: Error[] = [];
    client.on('disconnect', (_o: URL, _t: readonly Dispatcher[], err: Error) => disconnects.push(err));
    expect(await text(client)).toBe('ok');
    expect(await text(client, 'other.test')).toBe('ok');
    expect(disconnects).toEqual([]);
  });
});
