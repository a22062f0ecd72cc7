#!/usr/bin/env node
// Builds the module graph of a Rust crate from its source (one node per file: `a/b.rs` and
// `a/b/mod.rs` are `a::b`; inline `mod x { }` blocks count as their file) and reports import
// cycles. An edge A → B means a file of module A names something of module B through a
// `crate::…`, `super::…` or `self::…` path, or a `use` of a child module. Declaring a child
// (`mod b;`) is not an edge: only using it is.
//
//   node scripts/rust-module-cycles.mjs [crate/src] [--graph]
//
// Exits 1 and prints each cycle when there is one; `--graph` prints every edge.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Every .rs file under `dir`, as paths relative to it. */
function rustFiles(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...rustFiles(p, base));
    else if (name.endsWith('.rs')) out.push(relative(base, p));
  }
  return out.sort();
}

/** `a/b/mod.rs` → "a::b"; `lib.rs` → "crate" root "". */
function moduleOf(file) {
  const parts = file.split(sep);
  const last = parts.pop().replace(/\.rs$/, '');
  if (last !== 'mod' && !(parts.length === 0 && (last === 'lib' || last === 'main'))) parts.push(last);
  return parts.join('::');
}

/** Source without comments, string and char literals (their contents could look like paths). */
function stripNoise(src) {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const n = src[i + 1];
    if (c === '/' && n === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && n === '*') {
      let depth = 1;
      i += 2;
      while (i < src.length && depth > 0) {
        if (src[i] === '/' && src[i + 1] === '*') (depth++, (i += 2));
        else if (src[i] === '*' && src[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
    } else if (c === 'r' && /^r#*"/.test(src.slice(i, i + 10)) && !/\w/.test(src[i - 1] ?? '')) {
      const hashes = /^r(#*)"/.exec(src.slice(i))[1];
      const close = `"${hashes}`;
      const end = src.indexOf(close, i + 2 + hashes.length);
      i = end < 0 ? src.length : end + close.length;
      out += '""';
    } else if (c === '"') {
      i++;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      i++;
      out += '""';
    } else if (c === "'" && /^'(\\.[^']*|[^\\'])'/.test(src.slice(i, i + 12))) {
      i += /^'(\\.[^']*|[^\\'])'/.exec(src.slice(i, i + 12))[0].length;
      out += "' '";
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Expands a use tree ("a::{b, c::d as e, self}") into full paths (arrays of segments). */
function expandUseTree(text) {
  const paths = [];
  let i = 0;
  const ident = () => {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*|\*)\s*/.exec(text.slice(i));
    if (!m) return null;
    i += m[0].length;
    return m[1];
  };
  const tree = (prefix) => {
    for (;;) {
      if (text.slice(i).trimStart().startsWith('{')) {
        i = text.indexOf('{', i) + 1;
        for (;;) {
          tree(prefix);
          const rest = text.slice(i).trimStart();
          i = text.length - rest.length;
          if (rest.startsWith(',')) i++;
          if (text.slice(i).trimStart().startsWith('}')) {
            i = text.indexOf('}', i) + 1;
            return;
          }
          if (i >= text.length) return;
        }
      }
      const seg = ident();
      if (seg === null) return;
      const rest = text.slice(i);
      if (rest.startsWith('::')) {
        i += 2;
        prefix = [...prefix, seg];
        continue;
      }
      paths.push(seg === 'self' ? prefix : [...prefix, seg]);
      const alias = /^\s*as\s+[A-Za-z_][A-Za-z0-9_]*\s*/.exec(text.slice(i));
      if (alias) i += alias[0].length;
      return;
    }
  };
  tree([]);
  return paths;
}

/** Module paths (arrays of segments) a file names, each with the inline-module scope it was in. */
function references(src) {
  const code = stripNoise(src);
  const refs = [];
  // Inline modules: a stack of [name, brace depth at which it closes].
  const scope = [];
  let depth = 0;
  const tokens =
    /\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{|\buse\s+([^;]+);|(?<![\w:])((?:[A-Za-z_][A-Za-z0-9_]*)(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)|[{}]/g;
  for (let m; (m = tokens.exec(code)); ) {
    if (m[0] === '{') depth++;
    else if (m[0] === '}') {
      depth--;
      while (scope.length && scope[scope.length - 1][1] > depth) scope.pop();
    } else if (m[1]) {
      depth++;
      scope.push([m[1], depth]);
    } else if (m[2] !== undefined) {
      const inner = scope.map((s) => s[0]);
      for (const p of expandUseTree(m[2])) refs.push({ path: p, inner });
      // Braces inside the use tree are balanced; they do not change the depth.
    } else if (m[3]) {
      refs.push({ path: m[3].split(/\s*::\s*/), inner: scope.map((s) => s[0]) });
    }
  }
  return refs;
}

/** The module graph of the crate whose `src` is `dir`: Map<module, Set<module>>. */
export function moduleGraph(dir) {
  const files = rustFiles(dir);
  const modules = new Map(files.map((f) => [moduleOf(f), f]));
  const graph = new Map([...modules.keys()].map((m) => [m, new Set()]));
  const split = (m) => (m === '' ? [] : m.split('::'));
  for (const [mod, file] of modules) {
    for (const { path, inner } of references(readFileSync(join(dir, file), 'utf8'))) {
      // Resolve to absolute segments. Inside an inline module, `super` first leaves it.
      let here = [...split(mod), ...inner];
      let segs = [...path];
      if (segs[0] === 'crate') {
        here = [];
        segs.shift();
      } else if (segs[0] === 'self' || segs[0] === 'super') {
        while (segs[0] === 'self' || segs[0] === 'super') {
          if (segs.shift() === 'super') here = here.slice(0, -1);
        }
      } else {
        // A relative path (2018 paths) naming a child module; anything else is an external crate, a
        // type's associated item or a local.
        if (!modules.has([...split(mod), segs[0]].join('::'))) continue;
        here = split(mod);
      }
      const full = [...here, ...segs];
      // The longest prefix that is a module file (inline modules fold into their file).
      let target = null;
      for (let n = full.length; n >= 0; n--) {
        const cand = full.slice(0, n).join('::');
        if (modules.has(cand)) {
          target = cand;
          break;
        }
      }
      if (target !== null && target !== mod) graph.get(mod).add(target);
    }
  }
  return graph;
}

/** Strongly connected components with more than one module (Tarjan), i.e. the import cycles. */
export function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) found.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

const name = (m) => (m === '' ? 'crate' : m);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--')) ?? 'crates/engine/src';
  const graph = moduleGraph(dir);
  if (args.includes('--graph')) {
    for (const [m, deps] of graph) console.log(`${name(m)} -> ${[...deps].map(name).sort().join(', ')}`);
  }
  const found = cycles(graph);
  for (const c of found) console.log(`cycle: ${c.map(name).join(' <-> ')}`);
  if (found.length > 0) process.exit(1);
  console.log(`${graph.size} modules, no import cycle`);
}
