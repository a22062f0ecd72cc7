// The id → request table the engine's events are routed through (ts/native/request-table.ts):
// lookups by slot, requests that outlive their slot, growth. It must also not keep closed requests
// alive through young-generation collections, as a Map with churning keys does.
import { describe, expect, it } from 'vitest';
import { RequestTable } from '../ts/native/request-table.js';
import { useChildRuns } from './fixtures/child-run.js';
import { GC_PRELUDE } from './fixtures/child-gc.js';

const runChild = useChildRuns();

describe('RequestTable', () => {
  it('finds what was added, and nothing for ids never added or already removed', () => {
    const t = new RequestTable<string>();
    t.add(1, 'a');
    t.add(2, 'b');
    expect(t.get(1)).toBe('a');
    expect(t.get(2)).toBe('b');
    expect(t.get(3)).toBeUndefined();
    // Same slot as id 1, another id: a late event for a request that is gone.
    expect(t.get(1 + 1024)).toBeUndefined();
    expect(t.size).toBe(2);
    expect(t.delete(1)).toBe(true);
    expect(t.delete(1)).toBe(false);
    expect(t.get(1)).toBeUndefined();
    expect(t.get(2)).toBe('b');
    expect(t.size).toBe(1);
  });

  it('keeps a request that is still open when a newer id needs its slot', () => {
    const t = new RequestTable<string>();
    t.add(5, 'long poll');
    t.add(5 + 1024, 'newer');
    t.add(5 + 2048, 'newest');
    expect(t.get(5)).toBe('long poll');
    expect(t.get(5 + 1024)).toBe('newer');
    expect(t.get(5 + 2048)).toBe('newest');
    t.replace(5, 'tunnel');
    expect(t.get(5)).toBe('tunnel');
    expect([...t.values()].sort()).toEqual(['newer', 'newest', 'tunnel']);
    expect(t.delete(5)).toBe(true);
    expect(t.delete(5 + 1024)).toBe(true);
    expect(t.get(5)).toBeUndefined();
    expect(t.get(5 + 2048)).toBe('newest');
    expect(t.size).toBe(1);
  });

  it('grows past half full, and every entry is still found', () => {
    const t = new RequestTable<number>();
    for (let id = 1; id <= 10_000; id++) t.add(id, id * 2);
    expect(t.size).toBe(10_000);
    for (let id = 1; id <= 10_000; id++) expect(t.get(id)).toBe(id * 2);
    for (let id = 1; id <= 10_000; id += 2) t.delete(id);
    expect(t.size).toBe(5_000);
    expect(t.get(1)).toBeUndefined();
    expect(t.get(10_000)).toBe(20_000);
    expect([...t.values()]).toHaveLength(5_000);
  });

  it('takes ids up to 2^32 - 1', () => {
    const t = new RequestTable<string>();
    const top = 0xffffffff;
    t.add(top, 'top');
    t.add(top - 1, 'below');
    expect(t.get(top)).toBe('top');
    expect(t.get(top - 1)).toBe('below');
    expect(t.get(top - 1024)).toBeUndefined();
    t.replace(top, 'replaced');
    expect(t.get(top)).toBe('replaced');
    expect(t.delete(top)).toBe(true);
    expect(t.get(top)).toBeUndefined();
  });

  it("does not keep closed requests alive through young-generation collections (a Map's retired tables do)", async () => {
    // Requests come and go, 100 open at a time, after a full collection moved the table to the old
    // generation: what young collections then promote is what the table kept alive.
    const run = await runChild(
      undefined,
      '',
      `${GC_PRELUDE}
      const { RequestTable } = await import(new URL('./native/request-table.js', process.env.FERRO_LIB));
      function promotedKiB(table, add) {
        const open = [];
        let id = 1;
        for (; id <= 100; id++) { add(table, id, { id }); open.push(id); }
        gc();
        gc();
        const before = oldGen();
        for (let round = 0; round < 20; round++) {
          for (let i = 0; i < 1000; i++) {
            add(table, id, { id, state: new Array(16).fill(id) });
            table.delete(open.shift());
            open.push(id++);
          }
          gc({ type: 'minor' });
        }
        return Math.round((oldGen() - before) / 1024);
      }
      const map = promotedKiB(new Map(), (t, id, v) => t.set(id, v));
      const table = promotedKiB(new RequestTable(), (t, id, v) => t.add(id, v));
      console.log(JSON.stringify({ map, table }));
      `,
    );
    const { map, table } = JSON.parse(run.stdout) as { map: number; table: number };
    // The control: this V8 does promote what a churning Map retired (~3.7 MiB here).
    expect(map).toBeGreaterThan(1024);
    expect(table).toBeLessThan(256);
  });
});
