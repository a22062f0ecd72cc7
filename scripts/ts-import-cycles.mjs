#!/usr/bin/env node
// Builds the import graph of a TypeScript tree (one node per file) and reports import cycles.
// An edge A → B is a relative `import` / `export … from` / `import()` of B in A. Imports that
// only bring types (`import type`, `export type`, or every name marked `type`) are erased when
// compiled, so they are left out unless `--types` is given.
//
//   node scripts/ts-import-cycles.mjs [dir=ts] [--types] [--graph]
//
// Exits 1 and prints each cycle (a strongly connected set of files) when there is one.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

// Static imports and re-exports (with their clause), side-effect imports, dynamic imports.
const STATIC = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** True when an import clause brings only types (`{ type A, type B }`). */
function onlyTypes(clause) {
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (braces === null) return false;
  const names = braces[1].split(',').map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** The files `file` imports (relative specifiers only), resolved to .ts paths. */
export function importsOf(file, { types = false } = {}) {
  const src = readFileSync(file, 'utf8');
  const specs = [];
  for (const m of src.matchAll(STATIC)) {
    if (!types && (m[2] !== undefined || onlyTypes(m[3]))) continue;
    specs.push(m[4]);
  }
  for (const m of src.matchAll(BARE)) specs.push(m[1]);
  for (const m of src.matchAll(DYNAMIC)) specs.push(m[1]);
  return specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

/** Strongly connected sets of more than one file (or a file importing itself), as paths relative to `dir`. */
export function findCycles(dir, options = {}) {
  const root = resolve(dir);
  const files = tsFiles(root);
  const graph = new Map(files.map((f) => [f, importsOf(f, options)]));
  // Tarjan's algorithm.
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) !== idx.get(v)) return;
    const set = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(set.map((f) => relative(root, f)).sort());
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return { files: files.length, edges: [...graph].map(([f, ts]) => [relative(root, f), ts.map((t) => relative(root, t))]), cycles };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--')) ?? 'ts';
  const { files, edges, cycles } = findCycles(dir, { types: args.includes('--types') });
  if (args.includes('--graph')) for (const [f, ts] of edges) for (const t of ts) console.log(`${f} -> ${t}`);
  const kind = args.includes('--types') ? 'imports (types included)' : 'runtime imports';
  if (cycles.length === 0) {
    console.log(`no import cycle among ${files} files (${kind})`);
  } else {
    console.log(`${cycles.length} import cycle(s) among ${files} files (${kind}):`);
    for (const c of cycles) console.log(`  ${c.join(' ⇄ ')}`);
    process.exitCode = 1;
  }
}
