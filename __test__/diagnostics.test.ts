// The `lib:` diagnostics channels: every channel subscribed, payloads and order checked for a
// successful request, a failed one and a failed connection; headers added in request:create reach
// the server; publishUndiciChannels() mirrors everything under undici's names.
import { afterEach, describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, errors, fetch, publishUndiciChannels } from '../ts/index.js';
import { httpServer, rawServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { CHANNELS } from '../ts/core/diagnostics.js';

// The POST of a request with a small body, up to the response.
const POST_SENT = [
  'request:create',
  'client:beforeConnect',
  'client:connected',
  'client:sendHeaders',
  'request:bodyChunkSent',
  'request:bodySent',
];

interface Seen {
  name: string;
  // Payloads are checked field by field below.
  msg: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const { track } = useCleanup();
const unsubscribers: (() => void)[] = [];
afterEach(() => {
  while (unsubscribers.length) unsubscribers.pop()!();
  publishUndiciChannels(false);
});

/** Subscribes to every channel under `prefix`; returns what arrives, in order. */
function record(prefix = 'lib'): Seen[] {
  const seen: Seen[] = [];
  for (const name of CHANNELS) {
    const fn = (msg: unknown): void => {
      seen.push({ name, msg: msg as Seen['msg'] });
    };
    dc.subscribe(`${prefix}:${name}`, fn);
    unsubscribers.push(() => dc.unsubscribe(`${prefix}:${name}`, fn));
  }
  return seen;
}

const names = (seen: Seen[]): string[] => seen.map((s) => s.name);

describe('lib: diagnostics channels', () => {
  it('has one channel per undici channel', () => {
    expect(CHANNELS).toHaveLength(18);
    expect(new Set(CHANNELS).size).toBe(18);
  });

  it('a successful request: every message in order with its payload', async () => {
    const s = track(
      await httpServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(201, 'Made', { 'x-reply': 'yes', trailer: 'x-t' });
          res.write('part');
          res.addTrailers({ 'x-t': 'done' });
          res.end();
        });
      }),
    );
    const client = track(new Client(s.origin));
    const seen = record();
    const res = await client.request({ path: '/p?q=1', method: 'POST', body: 'hello', headers: { 'x-mine': 'v' } });
    expect(await res.body.text()).toBe('part');
    expect(names(seen)).toEqual([
      ...POST_SENT,
      'request:headers',
      'request:bodyChunkReceived',
      'request:trailers',
    ]);
    const request = seen[0]!.msg.request;
    // One request object travels through every request message.
    for (const m of seen) if (m.name.startsWith('request:') || m.name === 'client:sendHeaders') expect(m.msg.request).toBe(request);
    expect(request).toMatchObject({ origin: s.origin, method: 'POST', path: '/p?q=1', completed: true, aborted: false });
    expect(request.headers).toEqual(['host', `127.0.0.1:${s.port}`, 'x-mine', 'v']);
    const params = { host: `127.0.0.1:${s.port}`, hostname: '127.0.0.1', protocol: 'http:', port: String(s.port), version: 'h1', servername: null };
    expect(seen[1]!.msg.connectParams).toMatchObject(params);
    expect(seen[2]!.msg.connectParams).toMatchObject(params);
    expect(seen[2]!.msg.socket).toMatchObject({ remoteAddress: '127.0.0.1', remotePort: s.port, encrypted: false });
    expect(seen[3]!.msg.headers).toBe(`host: 127.0.0.1:${s.port}\r\nx-mine: v\r\n`);
    expect(seen[3]!.msg.socket.remotePort).toBe(s.port);
    expect(seen[4]!.msg.chunk).toEqual(Buffer.from('hello'));
    const response = seen[6]!.msg.response;
    expect(response.statusCode).toBe(201);
    expect(response.statusText).toBe('Made');
    const rawNames = (response.headers as Buffer[]).filter((_, i) => i % 2 === 0).map((b) => b.toString().toLowerCase());
    expect(rawNames).toContain('x-reply');
    expect(response.headers.every((b: unknown) => Buffer.isBuffer(b))).toBe(true);
    expect(Buffer.concat(seen.filter((m) => m.name === 'request:bodyChunkReceived').map((m) => m.msg.chunk)).toString()).toBe('part');
    expect(seen[8]!.msg.trailers.map(String)).toEqual(['x-t', 'done']);
  });

  it('a streamed body: one bodyChunkSent per chunk, then bodySent', async () => {
    const s = track(await httpServer((req, res) => req.resume().on('end', () => res.end('ok'))));
    const client = track(new Client(s.origin));
    const seen = record();
    async function* body(): AsyncGenerator<string> {
      yield 'a';
      yield 'bc';
    }
    const res = await client.request({ path: '/', method: 'PUT', body: body() });
    await res.body.text();
    const sent = seen.filter((m) => m.name === 'request:bodyChunkSent' || m.name === 'request:bodySent');
    expect(sent.map((m) => (m.msg.chunk === undefined ? 'end' : String(m.msg.chunk)))).toEqual(['a', 'bc', 'end']);
  });

  it('a failed request: request:error carries the error, nothing after it', async () => {
    const s = track(
      await rawServer((socket) => {
        socket.once('data', () => socket.end('HTTP/1.1 abc\r\n\r\n'));
      }),
    );
    const client = track(new Client(s.origin));
    const seen = record();
    const err = await client.request({ path: '/bad', method: 'POST', body: 'x' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.HTTPParserError);
    expect(names(seen)).toEqual([...POST_SENT, 'request:error']);
    expect(seen[6]!.msg.error).toBe(err);
    expect(seen[6]!.msg.request.completed).toBe(false);
  });

  it('an aborted request: request:error with the abort reason and aborted: true', async () => {
    const s = track(await httpServer(() => {}));
    const client = track(new Client(s.origin));
    const seen = record();
    const ac = new AbortController();
    const pending = client.request({ path: '/slow', method: 'GET', signal: ac.signal }).catch((e: Error) => e);
    await new Promise<void>((resolve) => {
      const onSent = (): void => {
        dc.unsubscribe('lib:client:sendHeaders', onSent);
        resolve();
      };
      dc.subscribe('lib:client:sendHeaders', onSent);
    });
    ac.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(errors.RequestAbortedError);
    const last = seen[seen.length - 1]!;
    expect(last.name).toBe('request:error');
    expect(last.msg.error).toBe(err);
    expect(last.msg.request.aborted).toBe(true);
  });

  it('a failed connection: client:connectError, then request:error with the same code', async () => {
    const s = await httpServer(() => {});
    await s.close();
    const client = track(new Client(s.origin));
    const seen = record();
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: Error) => e)) as Error & { code: string };
    expect(err.code).toBe('ECONNREFUSED');
    expect(names(seen)).toEqual(['request:create', 'client:beforeConnect', 'client:connectError', 'request:error']);
    expect(seen[2]!.msg.connectParams).toMatchObject({ host: `127.0.0.1:${s.port}`, protocol: 'http:', version: 'h1' });
    expect(seen[2]!.msg.error.code).toBe('ECONNREFUSED');
    expect(seen[3]!.msg.error).toBe(err);
  });

  it('headers added in request:create reach the server', async () => {
    let got: string | undefined;
    const s = track(
      await httpServer((req, res) => {
        got = req.headers['x-added'] as string | undefined;
        res.end();
      }),
    );
    const client = track(new Client(s.origin));
    const onCreate = ({ request }: { request: { addHeader(n: string, v: string): void } }): void => request.addHeader('x-added', 'from-create');
    dc.subscribe('lib:request:create', onCreate as (m: unknown) => void);
    unsubscribers.push(() => dc.unsubscribe('lib:request:create', onCreate as (m: unknown) => void));
    const res = await client.request({ path: '/', method: 'GET' });
    await res.body.text();
    expect(got).toBe('from-create');
  });

  it('addHeader rejects invalid headers and later calls with InvalidArgumentError', async () => {
    const s = track(await httpServer((req, res) => res.end()));
    const client = track(new Client(s.origin));
    const thrown: unknown[] = [];
    let kept: { addHeader(n: string, v: string): void } | null = null;
    const onCreate = ({ request }: { request: { addHeader(n: string, v: string): void } }): void => {
      kept = request;
      for (const [n, v] of [['bad name', 'v'], ['x-ok', 'a\r\nb'], ['host', 'elsewhere']]) {
        try {
          request.addHeader(n!, v!);
        } catch (err) {
          thrown.push(err);
        }
      }
    };
    dc.subscribe('lib:request:create', onCreate as (m: unknown) => void);
    unsubscribers.push(() => dc.unsubscribe('lib:request:create', onCreate as (m: unknown) => void));
    const res = await client.request({ path: '/', method: 'GET' });
    await res.body.text();
    expect(thrown).toHaveLength(3);
    for (const e of thrown) expect(e).toBeInstanceOf(errors.InvalidArgumentError);
    expect(() => kept!.addHeader('x-late', 'v')).toThrow(errors.InvalidArgumentError);
  });

  it('https: connectParams say https: and the socket is encrypted', async () => {
    const tls = (name: string): string => readFileSync(join(import.meta.dirname, 'fixtures', 'tls', name), 'utf8');
    const server = createHttpsServer({ key: tls('localhost.key'), cert: tls('localhost.pem') }, (req, res) => res.end('s'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
    const client = track(new Client(origin, { connect: { ca: tls('ca.pem') } }));
    const seen = record();
    await (await client.request({ path: '/', method: 'GET' })).body.text();
    const connected = seen.find((m) => m.name === 'client:connected')!;
    expect(connected.msg.connectParams).toMatchObject({ protocol: 'https:', version: 'h1', hostname: 'localhost', servername: 'localhost' });
    expect(connected.msg.socket).toMatchObject({ encrypted: true, remoteAddress: '127.0.0.1' });
    expect(seen.find((m) => m.name === 'client:sendHeaders')!.msg.socket.encrypted).toBe(true);
  });

  it('fetch requests are published too', async () => {
    const s = track(await httpServer((req, res) => res.end('f')));
    const client = track(new Client(s.origin));
    const seen = record();
    const res = await fetch(`${s.origin}/f`, { dispatcher: client });
    expect(await res.text()).toBe('f');
    const create = seen.find((m) => m.name === 'request:create')!;
    expect(create.msg.request).toMatchObject({ method: 'GET', path: '/f', origin: s.origin });
    expect(names(seen)).toContain('request:trailers');
  });

  it('publishUndiciChannels() mirrors every message under undici: names, and can be turned off', async () => {
    const s = track(await httpServer((req, res) => res.end('u')));
    const client = track(new Client(s.origin));
    const lib = record('lib');
    const undici = record('undici');
    publishUndiciChannels();
    await (await client.request({ path: '/u', method: 'GET' })).body.text();
    expect(names(undici)).toEqual(names(lib));
    expect(names(undici)).toContain('request:headers');
    publishUndiciChannels(false);
    const before = undici.length;
    await (await client.request({ path: '/u2', method: 'GET' })).body.text();
    expect(undici.length).toBe(before);
    expect(() => publishUndiciChannels('yes' as unknown as boolean)).toThrow(errors.InvalidArgumentError);
  });

  it('publishes nothing to channels nobody subscribed to', async () => {
    const s = track(await httpServer((req, res) => res.end()));
    const client = track(new Client(s.origin));
    const headersOnly: unknown[] = [];
    const fn = (m: unknown): void => {
      headersOnly.push(m);
    };
    dc.subscribe('lib:request:headers', fn);
    unsubscribers.push(() => dc.unsubscribe('lib:request:headers', fn));
    const published: string[] = [];
    const spyOn = (name: string): void => {
      const ch = dc.channel(`lib:${name}`);
      const orig = ch.publish.bind(ch);
      ch.publish = (m: unknown) => {
        published.push(name);
        orig(m);
      };
      unsubscribers.push(() => {
        ch.publish = orig;
      });
    };
    for (const n of CHANNELS) spyOn(n);
    await (await client.request({ path: '/', method: 'GET' })).body.text();
    expect(published).toEqual(['request:headers']);
    expect(headersOnly).toHaveLength(1);
  });
});
