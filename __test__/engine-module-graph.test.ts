// The engine's modules depend in one direction only (issue 10): the pool owns connections, the
// registries sit below everything that uses them. scripts/rust-module-cycles.mjs builds the module
// graph from the `crate::` / `super::` paths of crates/engine/src and finds its cycles.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { cycles, moduleGraph } from '../scripts/rust-module-cycles.mjs';

type Graph = Map<string, Set<string>>;
const graphOf = moduleGraph as (dir: string) => Graph;
const cyclesOf = cycles as (g: Graph) => string[][];

function crate(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferro-modgraph-'));
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, text);
  }
  return dir;
}

describe('engine module graph', () => {
  it('crates/engine/src has no import cycle', () => {
    const graph = graphOf('crates/engine/src');
    expect(graph.size).toBeGreaterThan(30);
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('the pool depends on connections, never the other way round', () => {
    const graph = graphOf('crates/engine/src');
    const conn = [...graph.keys()].filter((m) => m === 'conn' || m.startsWith('conn::'));
    expect(conn.length).toBeGreaterThan(0);
    for (const m of conn) expect([...graph.get(m)!].filter((d) => d === 'pool' || d === 'engine')).toEqual([]);
    expect(graph.get('registry')!.has('engine')).toBe(false);
  });

  it('finds a cycle through use trees, super paths and inline paths', () => {
    const dir = crate({
      'lib.rs': 'mod a;\nmod b;\n',
      'a/mod.rs': 'use crate::{b::{self, Thing as T}};\nmod inner;\n',
      'a/inner.rs': '// crate::b is only a comment here\nfn f() { let s = "crate::b"; super::g(); }\n',
      'b.rs': 'fn h() -> crate::a::inner::X { todo!() }\n',
    });
    const graph = graphOf(dir);
    expect([...graph.get('a')!]).toEqual(['b']);
    expect([...graph.get('a::inner')!]).toEqual(['a']);
    expect([...graph.get('b')!]).toEqual(['a::inner']);
    expect(cyclesOf(graph)).toEqual([['a', 'a::inner', 'b']]);
  });

  it('reports none for a layered crate, and ignores inline test modules going up', () => {
    const dir = crate({
      'lib.rs': 'pub mod low;\npub mod high;\n',
      'low.rs': 'pub struct L;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n',
      'high.rs': 'use crate::low::L;\n',
    });
    const graph = graphOf(dir);
    expect([...graph.get('low')!]).toEqual([]);
    expect(cyclesOf(graph)).toEqual([]);
  });
});
