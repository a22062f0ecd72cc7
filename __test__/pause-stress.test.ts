// Stress for pause/resume: many short pause/resume cycles on large bodies, resumed from every
// kind of callback (microtask, nextTick, setImmediate, a timer), several responses at once, over
// every transport (native and bridged, plain and TLS). Any lost wake-up between a pause, bytes
// the engine still holds and the socket shows as a response that never completes.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Pool } from '../ts/index.js';
import { buildConnector } from '../ts/core/connector.js';
import type { DispatchHandler } from '../ts/core/types.js';
import { backpressuredBody } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const tlsDir = join(import.meta.dirname, 'fixtures', 'tls');
const ca = readFileSync(join(tlsDir, 'ca.pem'), 'utf8');
const cert = { key: readFileSync(join(tlsDir, 'localhost.key'), 'utf8'), cert: readFileSync(join(tlsDir, 'localhost.pem'), 'utf8') };

type Opts = ConstructorParameters<typeof Pool>[1];
const paths: [string, boolean, () => Opts][] = [
  ['native http', false, () => ({})],
  ['bridged http', false, () => ({ connect: (o, cb) => buildConnector({})(o, cb) })],
  ['native https', true, () => ({ connect: { ca } })],
  ['bridged https', true, () => ({ connect: (o, cb) => buildConnector({ ca })(o, cb) })],
];

const BODY = 8 << 20;

/** xorshift: the same pause pattern on every run. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** One GET whose handler pauses on about a third of the chunks and resumes from a random callback. */
function fetchWithPauses(pool: Pool, path: string, random: () => number): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const handler: DispatchHandler = {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData(controller, chunk) {
        bytes += chunk.length;
        if (random() > 0.35) return;
        controller.pause();
        const resume = (): void => controller.resume();
        const how = Math.floor(random() * 4);
        if (how === 0) queueMicrotask(resume);
        else if (how === 1) process.nextTick(resume);
        else if (how === 2) setImmediate(resume);
        else setTimeout(resume, Math.floor(random() * 3));
      },
      onResponseEnd: () => resolve(bytes),
      onResponseError: (_c, err) => reject(err),
    };
    pool.dispatch({ path, method: 'GET' }, handler);
  });
}

describe.each(paths)('pause/resume stress over the %s path', (_name, secure, opts) => {
  it('every response completes, whole, through hundreds of pause/resume cycles', { timeout: 120_000 }, async () => {
    const handler = backpressuredBody(BODY, 's');
    const server = secure ? https.createServer(cert, handler) : http.createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => new Promise((r) => server.close(r)));
    const { port } = server.address() as AddressInfo;
    const pool = cleanup.track(new Pool(`${secure ? 'https' : 'http'}://127.0.0.1:${port}`, { ...opts(), connections: 3 }));
    const random = rng(0x5eed + port);
    for (let round = 0; round < 4; round++) {
      const sizes = await Promise.all([0, 1, 2].map((i) => fetchWithPauses(pool, `/${round}/${i}`, random)));
      expect(sizes).toEqual([BODY, BODY, BODY]);
    }
  });
});
