// fetch as undici's behaves where its own tests pin it down: Response.bytes(), responses that
// have no body (HEAD, null-body statuses), the request headers fetch adds, and the Referer header
// under each referrer policy. Each scenario runs against a real loopback server.
import { describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent } from '../ts/index.js';
import { fetch, type FetchInit } from '../ts/fetch/fetch.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const serve = async (...args: Parameters<typeof servers.httpServer>) => cleanup.track(await servers.httpServer(...args));

function agent(): Agent {
  const a = new Agent();
  cleanup.push(() => a.destroy());
  return a;
}

const fetchWith = (url: string, init: FetchInit = {}): Promise<Response> => fetch(url, { dispatcher: agent(), ...init });

describe('Response.bytes()', () => {
  it('returns the body as a Uint8Array of its own buffer', async () => {
    const srv = await serve((_req, res) => res.end('hello bytes'));
    const bytes = await (await fetchWith(srv.origin)).bytes();
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).toString()).toBe('hello bytes');
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
  });

  it('returns the decoded body, and the body once read is used', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync('x'.repeat(100_000)));
    });
    const res = await fetchWith(srv.origin);
    const bytes = await res.bytes();
    expect(bytes.byteLength).toBe(100_000);
    expect(bytes.every((b) => b === 0x78)).toBe(true);
    expect(res.bodyUsed).toBe(true);
    await expect(res.bytes()).rejects.toThrow(TypeError);
  });

  it('reads a body whose stream was touched, and a clone', async () => {
    const srv = await serve((_req, res) => res.end('abc'));
    const res = await fetchWith(srv.origin);
    const copy = res.clone();
    expect(Buffer.from(await res.bytes()).toString()).toBe('abc');
    expect(Buffer.from(await copy.bytes()).toString()).toBe('abc');
  });
});

describe('responses without a body', () => {
  it.each([
    ['HEAD', 200],
    ['GET', 204],
    ['GET', 205],
    ['GET', 304],
  ])('%s answered %i has a null body, as undici’s fetch gives', async (method, status) => {
    const srv = await serve((_req, res) => {
      res.writeHead(status, { 'content-length': status === 200 ? '5' : '0' });
      res.end();
    });
    const res = await fetchWith(srv.origin, { method });
    expect(res.status).toBe(status);
    expect(res.body).toBeNull();
    expect(res.bodyUsed).toBe(false);
    expect(await res.text()).toBe('');
    expect((await res.bytes()).byteLength).toBe(0);
    // A body that is null is never used: it can be read again and cloned.
    expect(res.clone().body).toBeNull();
  });

  it('a HEAD response leaves the connection reusable', async () => {
    let sockets = 0;
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '5', 'x-port': String(req.socket.remotePort) });
      res.end(req.method === 'HEAD' ? undefined : 'hello');
    });
    srv.server.on('connection', () => sockets++);
    const d = agent();
    const head = await fetch(srv.origin, { dispatcher: d, method: 'HEAD' });
    expect(head.body).toBeNull();
    const get = await fetch(srv.origin, { dispatcher: d });
    expect(await get.text()).toBe('hello');
    expect(sockets).toBe(1);
  });
});
