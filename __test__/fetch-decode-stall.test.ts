// A large gzip body read through fetch must not stall. On Node 20 it did, almost every time, a few
// MiB in (on Node 24 in some runs): the decoding Transform (ts/fetch/content-decoding.ts) finished
// a held transform from inside _read, Transform parked the write callback for a later _read, and
// Readable never made one (it waits for a push first). No more input was asked for: the body hung
// while the dispatcher held unread bytes, and once it had none left (the whole response received)
// nothing kept the event loop alive and the process exited with code 13 (a top-level await never
// settled).
//
// The fetch runs in a child process so that either shows, bounded by a deadline there; the
// server is here, in the test's process.
import { describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';

const cleanup = useCleanup();
const runChild = useChildRuns();

const MiB = 1024 * 1024;
const DECODED = 24 * MiB;
// Reading DECODED takes about a second; a stall shows as no end by then.
const DEADLINE_MS = 30_000;
/**
 * Text of words in a pseudo-random order: compressible about 40:1, so the gzip body comes in as
 * many input chunks, and most of them decode to a length that is not a multiple of the decoder's
 * 64 KiB step; the stall needs the short step left at the end of one input chunk (a repeating
 * pattern compresses so well that a run could get by on a couple of chunks).
 */
function words(length: number): Buffer {
  const dictionary = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau'.split(' ');
  const out = Buffer.allocUnsafe(length);
  let seed = 12345;
  for (let at = 0; at < length; ) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    at += out.write(dictionary[(seed >>> 16) % dictionary.length]! + ((seed & 7) === 0 ? '\n' : ' '), at);
  }
  return out;
}
const PLAIN = words(DECODED);

/** Serves PLAIN through a gzip stream, 256 KiB at a time, so the body goes out as it is compressed. */
async function gzipOrigin(): Promise<string> {
  const srv = cleanup.track(
    await servers.httpServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      const gz = zlib.createGzip();
      gz.pipe(res);
      let at = 0;
      const write = (): void => {
        while (at < DECODED) {
          const piece = PLAIN.subarray(at, at + 256 * 1024);
          at += piece.length;
          if (!gz.write(piece)) return void gz.once('drain', write);
        }
        gz.end();
      };
      write();
    }),
  );
  return srv.origin;
}

describe('fetch of a large gzip body', () => {
  it.each(['body reader', 'arrayBuffer()'])('is read to its end through the %s', async (how) => {
    const origin = await gzipOrigin();
    const read =
      how === 'body reader'
        ? `const reader = res.body.getReader();
           for (;;) { const { done, value } = await reader.read(); if (done) break; length += value.byteLength; }`
        : `length = (await res.arrayBuffer()).byteLength;`;
    const { stdout } = await runChild(
      undefined,
      origin,
      `const deadline = setTimeout(() => {
         console.error('the body did not end within ${DEADLINE_MS} ms');
         process.exit(2);
       }, ${DEADLINE_MS});
       // Not what keeps the process alive: a loop left with nothing to do exits (code 13) at once.
       deadline.unref();
       const res = await ferro.fetch(origin);
       let length = 0;
       ${read}
       clearTimeout(deadline);
       console.log(length);`,
    );
    expect(Number(stdout.trim())).toBe(DECODED);
  }, 60_000);
});
