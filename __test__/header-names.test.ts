// Response header names the engine sends as an index into its table of known spellings
// (crates/engine/src/header_names.rs): the headers object and rawHeaders must come out exactly as
// when every name travelled as bytes — case kept in rawHeaders, keys lowercased, repeats merged.
import { describe, expect, it } from 'vitest';
import { Client } from '../ts/index.js';
import { binding } from '../ts/native/binding.js';
import { countRequests, rawServer, readUntil } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { recorder } from './fixtures/recorder.js';

const cleanup = useCleanup();

// Known spellings, a known name in a case the table lacks, repeats across spellings, an unknown name.
const FIELDS: [string, string][] = [
  ['Content-Type', 'text/plain'],
  ['content-type', 'text/html'],
  ['Set-Cookie', 'a=1'],
  ['set-cookie', 'b=2'],
  ['SET-COOKIE', 'c=3'],
  ['X-Custom-Thing', 'v'],
  ['Date', 'Mon, 23 Nov 2026 18:00:00 GMT'],
  ['content-length', '2'],
];

describe('known header names', () => {
  it('the table names header tokens, each once', () => {
    const names = binding.knownHeaderNames();
    expect(names.length).toBeGreaterThan(40);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
    expect(names).toContain('content-length');
    expect(names).toContain('Keep-Alive');
  });

  it('decode to the same headers and rawHeaders as names sent as bytes', async () => {
    const head = `HTTP/1.1 200 OK\r\n${FIELDS.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\nok`;
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        for (;;) {
          await readUntil(socket, (t) => countRequests(t) >= 1);
          socket.write(head);
        }
      }),
    );
    const client = cleanup.track(new Client(srv.origin));
    const [handler, rec] = recorder();
    client.dispatch({ path: '/', method: 'GET' }, handler);
    await rec.done;
    expect(rec.controller!.rawHeaders!.map(String)).toEqual(FIELDS.flat());
    expect(rec.headers).toEqual({
      'content-type': ['text/plain', 'text/html'],
      'set-cookie': ['a=1', 'b=2', 'c=3'],
      'x-custom-thing': 'v',
      date: 'Mon, 23 Nov 2026 18:00:00 GMT',
      'content-length': '2',
    });
    expect(rec.text()).toBe('ok');

    const res = await client.request({ path: '/again', method: 'GET' });
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2', 'c=3']);
    expect(await res.body.text()).toBe('ok');
  });

  it('merge a known spelling into the same key set before by an unknown one, in every order', async () => {
    // The decoder skips the lookup for a known name a head has not set yet (ts/native/events.ts):
    // a spelling outside the table that came first must still be merged with.
    const orders: [string, string][][] = [
      [['SET-COOKIE', 'a=1'], ['set-cookie', 'b=2'], ['Set-Cookie', 'c=3']],
      [['CONTENT-type', 'text/plain'], ['Content-Type', 'text/html'], ['content-type', 'a/b']],
      [['set-cookie', 'a=1'], ['SET-COOKIE', 'b=2'], ['set-cookie', 'c=3']],
    ];
    let next = 0;
    const srv = cleanup.track(
      await rawServer(async (socket) => {
        for (;;) {
          await readUntil(socket, (t) => countRequests(t) >= 1);
          const fields = orders[next++]!;
          socket.write(`HTTP/1.1 200 OK\r\n${fields.map(([n, v]) => `${n}: ${v}\r\n`).join('')}content-length: 2\r\n\r\nok`);
        }
      }),
    );
    const client = cleanup.track(new Client(srv.origin));
    const seen: unknown[] = [];
    for (let i = 0; i < orders.length; i++) {
      const res = await client.request({ path: `/${i}`, method: 'GET' });
      await res.body.dump();
      seen.push(res.headers);
    }
    expect(seen).toEqual([
      { 'set-cookie': ['a=1', 'b=2', 'c=3'], 'content-length': '2' },
      { 'content-type': ['text/plain', 'text/html', 'a/b'], 'content-length': '2' },
      { 'set-cookie': ['a=1', 'b=2', 'c=3'], 'content-length': '2' },
    ]);
  });
});
