// The one framing of every batch the engine sends to JS (crates/engine/src/events.rs) and its one
// reader, ts/native/frames.ts: by hand for the edge cases, and through the real addon for DNS
// results (the resolver's own queue) — HTTP events cross it in every request suite.
import { describe, expect, it } from 'vitest';
import { frames } from '../ts/native/frames.js';
import { engineLookup, type LookupError, type ResolvedAddress } from '../ts/native/resolver.js';
import { frame } from './fixtures/frames.js';

/** Every frame of `batch` as [kind, id, payload as latin1]. */
function walk(batch: Buffer): [number, number, string][] {
  const out: [number, number, string][] = [];
  for (const f = frames(batch); f.next(); ) out.push([f.kind, f.id, batch.toString('latin1', f.start, f.end)]);
  return out;
}

function lookup(hostname: string, family: 0 | 4 | 6): Promise<[LookupError | null, ResolvedAddress[]]> {
  return new Promise((resolve) => engineLookup(hostname, family, 60_000, (err, addresses) => resolve([err, addresses])));
}

describe('frames', () => {
  it('a batch of thousands of DNS results reaches every caller', async () => {
    // The first test of its file, so the lookup ids start at 1. Once 'localhost' is cached, each
    // lookup answers at once, so all 40,000 results (none for family 6 here) make one batch. Before
    // the resolver's results were framed like engine events, the queue cut batches over 112 KiB
    // where event frames would end: the second piece began inside a record, and the lookups after
    // it never answered.
    await lookup('localhost', 0);
    const results = await Promise.all(Array.from({ length: 40_000 }, () => lookup('localhost', 6)));
    for (const [err, addresses] of results) {
      expect(err).toBeNull();
      expect(addresses.every((a) => a.family === 6)).toBe(true);
    }
  });

  it('walks kind, id and payload of each frame, ids up to 2^32 - 1', () => {
    const batch = Buffer.concat([frame(1, 7, Buffer.from('abc')), frame(250, 0xffffffff), frame(3, 0x80000000, Buffer.from('z'))]);
    expect(walk(batch)).toEqual([
      [1, 7, 'abc'],
      [250, 0xffffffff, ''],
      [3, 0x80000000, 'z'],
    ]);
    expect(walk(Buffer.alloc(0))).toEqual([]);
  });

  it('stops at a torn tail: a header or payload cut short is no frame', () => {
    const whole = frame(2, 1, Buffer.from('payload'));
    for (let cut = 0; cut < whole.length; cut++) expect(walk(whole.subarray(0, cut))).toEqual([]);
    expect(walk(Buffer.concat([whole, whole.subarray(0, 12)]))).toEqual([[2, 1, 'payload']]);
  });

  it('DNS results through the addon: addresses by family, and a failure with its code', async () => {
    const [err, both] = await lookup('localhost', 0);
    expect(err).toBeNull();
    expect(both.map((a) => a.address)).toContain('127.0.0.1');
    for (const a of both) expect(a.family).toBe(a.address.includes(':') ? 6 : 4);
    const [, v4] = await lookup('localhost', 4);
    expect(v4).toEqual(both.filter((a) => a.family === 4));

    const [failure, none] = await lookup('does-not-exist.invalid', 0);
    expect(none).toEqual([]);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(failure?.code);
    expect(failure).toMatchObject({ syscall: 'getaddrinfo', hostname: 'does-not-exist.invalid' });
    expect(failure?.message).toContain('does-not-exist.invalid');
  });
});
