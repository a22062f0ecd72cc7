// A fetch built through a Request (any init beyond method / headers / signal, or a Request as
// input) follows the caller's signal through Node's Request, which forwards the abort through a
// WeakRef to its own controller: once the Request is garbage, an abort must still reach the fetch.
import { describe, expect, it } from 'vitest';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fetch, Request } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const { track } = useCleanup();

describe('fetch: abort after the Request it was built from is collected', () => {
  const cases: [string, (url: string, signal: AbortSignal) => Promise<Response>][] = [
    ['an init with cache', (url, signal) => fetch(url, { signal, cache: 'no-store' }) as unknown as Promise<Response>],
    ['a Request as input', (url, signal) => fetch(new Request(url, { signal })) as unknown as Promise<Response>],
  ];
  for (const [name, start] of cases) {
    it(`${name}: the body read rejects with the abort, and the connection ends`, async () => {
      let closed!: Promise<void>;
      const s = track(
        await httpServer((req, res) => {
          closed = new Promise((resolve) => req.socket.on('close', () => resolve()));
          res.writeHead(200);
          res.write('first');
        }),
      );
      const ac = new AbortController();
      const res = await start(s.origin, ac.signal);
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      gc();
      const next = reader.read();
      ac.abort();
      await expect(next).rejects.toMatchObject({ name: 'AbortError' });
      await closed;
    });
  }
});
