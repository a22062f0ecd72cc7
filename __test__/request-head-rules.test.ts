// A request head is checked twice by design and must be checked the same way: by the TypeScript
// checks, in undici's order and with its messages, when the call is made; and once by the engine
// (crates/engine/src/request/head.rs, one rule table in request/rules.rs) when the head crosses
// into it. Every code unit 0..255 (and some above) in every piece of the head, from both sides.
import { describe, expect, it } from 'vitest';
import { Client, errors } from '../ts/index.js';
import { packHeaders } from '../ts/core/headers.js';
import { checkRequestLine, packRequest } from '../ts/core/request.js';
import { requestBodyParts } from '../ts/core/request-body.js';
import { createPool, forgetPool } from '../ts/native/engine.js';
import type { DispatchOptions } from '../ts/core/types.js';
import { createServer } from 'node:http';
import { countRequests, listen, rawServer, readUntil } from './fixtures/servers.js';
import { ca, h2Server } from './fixtures/h2.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

type Verdict = string | null; // the refusal's message, or null: accepted

function verdict(f: () => unknown): Verdict {
  try {
    f();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(errors.InvalidArgumentError);
    return (err as Error).message;
  }
}

/** What the TypeScript side says of one piece, through the checks dispatch() runs. */
const ts = {
  method: (m: string) => verdict(() => checkRequestLine({ path: '/', method: m } as DispatchOptions)),
  path: (p: string) => verdict(() => packRequest({ path: p, method: 'GET' } as DispatchOptions, requestBodyParts(null), 'h', true)),
  name: (n: string) => verdict(() => packHeaders({ [n]: 'v' })),
  value: (v: string) => verdict(() => packHeaders({ 'x-a': v })),
};

/** Each piece with the code unit under test in the middle, and the whole head it makes. */
const positions = {
  method: (c: string) => [`G${c}T`, `G${c}T\0/\0x-a\0v`],
  path: (c: string) => [`/a${c}b`, `GET\0/a${c}b\0x-a\0v`],
  name: (c: string) => [`x${c}y`, `GET\0/\0x${c}y\0v`],
  value: (c: string) => [`a${c}b`, `GET\0/\0x-a\0a${c}b`],
} as const;

// Above U+00FF: no byte of their own; U+010A's low byte is LF, U+0100's is NUL; a lone surrogate.
const UNITS = [...Array.from({ length: 256 }, (_, i) => i), 0x100, 0x10a, 0x17f, 0x20ac, 0xd83d];

describe('the request head rules', () => {
  it('every code unit in every piece: the engine refuses exactly what TypeScript refuses, with the same message', () => {
    const pool = createPool(
      {
        host: '127.0.0.1',
        port: 9,
        connections: 1,
        pipelining: 1,
        connectTimeout: 0,
        keepAliveTimeout: 0,
        keepAliveMaxTimeout: 0,
        keepAliveTimeoutThreshold: 0,
        maxHeaderSize: 16384,
        maxResponseSize: -1,
        maxRequestsPerClient: 0,
      },
      { onEngineConnected() {}, onEngineDisconnected() {}, onEngineConnectFailed() {} },
    );
    // Never flushed, so nothing connects; destroyed below with what it queued.
    let id = 0x7000_0000;
    const engine = (head: string): Verdict =>
      engineVerdict(() => {
        if (!pool.dispatch(id++, head, null, 0, 0, 0, -1)) throw new Error('pool gone');
      });
    const refusedBy: Record<string, number[]> = {};
    try {
      for (const [where, make] of Object.entries(positions)) {
        for (const unit of UNITS) {
          const c = String.fromCharCode(unit);
          const [piece, head] = make(c);
          const mine = ts[where as keyof typeof ts](piece);
          const theirs = engine(head);
          // NUL separates the pieces: the engine sees another head, refused for another reason.
          if (unit === 0) expect([where, mine !== null, theirs !== null]).toEqual([where, true, true]);
          else expect({ where, unit, engine: theirs }).toEqual({ where, unit, engine: mine });
          if (mine !== null) (refusedBy[where] ??= []).push(unit);
        }
      }
    } finally {
      forgetPool(pool);
      pool.destroy();
    }
    // The rules themselves (undici's): tokens for methods and names, `[\x21-\xff]` for a path,
    // tab, visible ASCII and obs-text for a value.
    const inRange = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const above = [0x100, 0x10a, 0x17f, 0x20ac, 0xd83d];
    expect(refusedBy.path).toEqual([...inRange(0, 0x20), ...above]);
    expect(refusedBy.value).toEqual([...inRange(0, 8), ...inRange(0x0a, 0x1f), 0x7f, ...above]);
    const tchar = new Set(Buffer.from("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"));
    expect(refusedBy.name).toEqual(UNITS.filter((u) => !tchar.has(u)));
    expect(refusedBy.method).toEqual(refusedBy.name);
  });

  it('a DEL in a path goes out as given, as undici sends it (the engine used to refuse it after dispatch)', async () => {
    const seen: string[] = [];
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        socket.on('error', () => {});
        const text = await readUntil(socket, (t) => countRequests(t) >= 1);
        seen.push(text.split('\r\n')[0]!);
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      }),
    );
    const client = cleanup.track(new Client(srv.origin));
    const res = await client.request({ path: '/a\x7fb?q=\x7f', method: 'GET' });
    expect(await res.body.text()).toBe('ok');
    expect(seen).toEqual(['GET /a\x7fb?q=\x7f HTTP/1.1']);
  });

  it('an upgrade value follows the header value rule, as in undici: obs-text and tab go out as bytes, CR is refused', async () => {
    const server = createServer();
    const seen: string[] = [];
    server.on('upgrade', (req, socket) => {
      seen.push(req.headers.upgrade!);
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\n');
    });
    const srv = cleanup.track(await listen(server));
    const client = cleanup.track(new Client(srv.origin));
    const { socket } = await client.upgrade({ path: '/', protocol: 'foo/1\u00e5\tbar' });
    socket.destroy();
    // node:http reads header bytes as latin1.
    expect(seen).toEqual(['foo/1\u00e5\tbar']);
    await expect(client.upgrade({ path: '/', protocol: 'foo\rbar' })).rejects.toThrow(new errors.InvalidArgumentError('invalid upgrade header'));
  });

  it('over HTTP/2 a path byte the h2 stack cannot carry as is goes out percent-encoded, not refused after dispatch', async () => {
    const paths: string[] = [];
    const srv = cleanup.track(
      await h2Server((stream, headers) => {
        paths.push(headers[':path'] as string);
        stream.respond({ ':status': 200 });
        stream.end('ok');
      }),
    );
    const client = cleanup.track(new Client(srv.origin, { connect: { ca }, allowH2: true }));
    const res = await client.request({ path: '/a\x7fb<c>`"#f?q=<\x7f>', method: 'GET' });
    expect(await res.body.text()).toBe('ok');
    expect(paths).toEqual(['/a%7Fb%3Cc%3E%60%22%23f?q=%3C%7F%3E']);
  });
});

/** `verdict` for the engine: its refusal is an Error with code InvalidArg (src/request_head.rs). */
function engineVerdict(f: () => void): Verdict {
  try {
    f();
    return null;
  } catch (err) {
    expect((err as { code?: unknown }).code).toBe('InvalidArg');
    return (err as Error).message;
  }
}
