// The Markdown tables of a bench run. `results` maps a row key (the scenario's name, with " (rust)"
// for the Rust server's run of it) to { ...scenario, name, contenders, rounds, median, perf? }.
import { baselineOf } from './scenarios.mjs';
import { SYSCALL_GROUPS } from './perf.mjs';

export const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
export const fmt1 = (n) => (n == null ? '–' : n.toFixed(1));
const fmtMb = (kb) => (kb == null ? '–' : (kb / 1024).toFixed(0));
const ratio = (a, b) => (a == null || b == null || !b ? '–' : `${(a / b).toFixed(2)}×`);

export function pickMedian(rounds, key) {
  const ok = rounds.filter((r) => r.ok);
  if (!ok.length) return rounds[0] ?? null;
  const sorted = [...ok].sort((a, b) => key(a) - key(b));
  // The median round; with an even count the lower middle one (the more conservative).
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function errorCell(r) {
  let msg = String(r?.error ?? 'no result').replace(/\s+/g, ' ');
  if (msg.length > 100) msg = msg.slice(0, 99) + '…'; // full text under Errors
  return `error: ${msg.replace(/\|/g, '\\|')}`;
}

/** The median result of undici's same API in the same scenario, when it succeeded. */
function baseOf(sc, c) {
  const base = sc.median[baselineOf(c)];
  return base?.ok ? base : null;
}

function throughputTable(results) {
  const lines = [
    '| scenario | contender | req/s | MB/s (body) | CPU µs/req | RSS MB | req/s vs undici | CPU vs undici |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [key, sc] of Object.entries(results)) {
    if (sc.mode !== 'throughput' || sc.name === 'memory') continue;
    for (const c of sc.contenders) {
      const r = sc.median[c];
      if (r === null && sc.rounds[c].length === 0) continue; // did not take part
      if (!r?.ok) {
        lines.push(`| ${key} | ${c} | ${errorCell(r)} | | | | |`);
        continue;
      }
      const b = baseOf(sc, c);
      lines.push(
        `| ${key} | ${c} | ${fmtInt(r.reqPerSec)} | ${fmt1((r.reqPerSec * sc.expectBytes) / 1e6)} | ${fmt1(r.cpuUsPerReq)} | ${fmtMb(r.maxRssKb)} | ${ratio(r.reqPerSec, b?.reqPerSec)} | ${ratio(r.cpuUsPerReq, b?.cpuUsPerReq)} |`,
      );
    }
  }
  return lines.join('\n');
}

function memoryTable(sc) {
  const lines = ['| contender | peak RSS MB | req/s | RSS vs undici |', '|---|---:|---:|---:|'];
  for (const c of sc.contenders) {
    const r = sc.median[c];
    if (!r?.ok) {
      lines.push(`| ${c} | ${errorCell(r)} | | |`);
      continue;
    }
    lines.push(`| ${c} | ${fmtMb(r.maxRssKb)} | ${fmtInt(r.reqPerSec)} | ${ratio(r.maxRssKb, baseOf(sc, c)?.maxRssKb)} |`);
  }
  return lines.join('\n');
}

function latencyTable(sc) {
  const lines = [
    '| contender | p50 µs | p99 µs | mean µs | CPU µs/req | p50 vs undici | p99 vs undici |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of sc.contenders) {
    const r = sc.median[c];
    if (!r?.ok) {
      lines.push(`| ${c} | ${errorCell(r)} | | | | | |`);
      continue;
    }
    const b = baseOf(sc, c)?.latency;
    const l = r.latency;
    lines.push(
      `| ${c} | ${fmt1(l.p50)} | ${fmt1(l.p99)} | ${fmt1(l.mean)} | ${fmt1(r.cpuUsPerReq)} | ${ratio(l.p50, b?.p50)} | ${ratio(l.p99, b?.p99)} |`,
    );
  }
  return lines.join('\n');
}

// The headline matrix: for every ferro API, its CPU per request and req/s as ratios to undici's same
// API, across the small / 64 KiB scenarios and both blocking settings, on each server that ran.
const HEADLINE_SCENARIOS = ['small', 'consumers', 'pipelined', '64k', '64k-pipelined'];
function headlineTable(results) {
  const keys = Object.keys(results).filter((k) => HEADLINE_SCENARIOS.includes(results[k].name));
  const apis = [...new Set(keys.flatMap((k) => results[k].contenders.filter((c) => c.startsWith('ferro-'))))];
  if (!keys.length || !apis.length) return null;
  const lines = [`| contender | ${keys.join(' | ')} |`, `|---|${keys.map(() => '---:').join('|')}|`];
  for (const c of apis) {
    const cells = keys.map((k) => {
      const r = results[k].median[c];
      const b = baseOf(results[k], c);
      return r?.ok && b ? `${ratio(r.cpuUsPerReq, b.cpuUsPerReq)} (${ratio(r.reqPerSec, b.reqPerSec)})` : '';
    });
    lines.push(`| ${c} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

const perReq = (n, r) => (n == null || !r.completed ? null : n / r.completed);
const sumOf = (counts, names) => names.reduce((a, n) => a + (counts[n] ?? 0), 0);

function perfTable(results) {
  const lines = [
    '| scenario | contender | syscalls/req | epoll waits | reads | writes | futex | other | ctx switches/req | malloc/req | JS heap B/req | GCs/1k req | N-API in/req | N-API out/req |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const crossings = [];
  for (const [key, sc] of Object.entries(results)) {
    for (const c of sc.contenders) {
      const r = sc.perf?.[c];
      if (!r) continue;
      if (!r.ok) {
        lines.push(`| ${key} | ${c} | ${errorCell(r)} | | | | | | | | | | | |`);
        continue;
      }
      const k = r.perfCounts ?? {};
      const total = k['raw_syscalls:sys_enter'];
      const groups = Object.values(SYSCALL_GROUPS).map((names) => sumOf(k, names));
      const other = total == null ? null : total - groups.reduce((a, b) => a + b, 0);
      const heap = r.counted?.heap;
      const napi = r.counted?.napi;
      const cell = (n) => fmt1(perReq(n, r));
      lines.push(
        `| ${key} | ${c} | ${cell(total)} | ${groups.map((g) => (total == null ? '–' : cell(g))).join(' | ')} | ${cell(other)} | ${cell(k['context-switches'])} | ${cell(k['probe_libc:malloc'])} | ${heap ? fmtInt(heap.bytes / r.completed) : '–'} | ${heap ? fmt1((heap.gcs * 1000) / r.completed) : '–'} | ${napi ? cell(napi.in) : '–'} | ${napi ? cell(napi.out) : '–'} |`,
      );
      if (napi) {
        const top = Object.entries(napi.byName)
          .slice(0, 5)
          .map(([name, n]) => `${name} ${fmt1(n / r.completed)}`);
        crossings.push(`- ${key} / ${c}: ${top.join(', ') || 'none'}`);
      }
    }
  }
  if (lines.length === 2) return null;
  if (crossings.length) lines.push('', 'N-API crossings per request, by function (largest first):', '', ...crossings);
  return lines.join('\n');
}

/** The report's Markdown after the header. */
export function renderReport(results, { perfNote }) {
  const report = [];
  const headline = headlineTable(results);
  if (headline) {
    report.push(
      '## Headlines',
      '',
      "Each ferro API's client CPU per request as a ratio to undici's same API, req/s ratio in brackets (below 1.00× CPU is cheaper).",
      '',
      headline,
      '',
    );
  }
  if (Object.values(results).some((s) => s.mode === 'throughput' && s.name !== 'memory')) {
    report.push('## Throughput', '', throughputTable(results), '');
  }
  for (const [key, sc] of Object.entries(results)) {
    if (sc.mode === 'latency') report.push(`## Latency: ${sc.title}${key === sc.name ? '' : ` (${key})`}`, '', latencyTable(sc), '');
  }
  for (const [key, sc] of Object.entries(results)) {
    if (sc.name === 'memory') report.push(`## Memory: ${sc.title}${key === sc.name ? '' : ` (${key})`}`, '', memoryTable(sc), '');
  }
  report.push(
    'Ratios compare with undici\'s same API (ferro-<api> vs undici-<api>; ferro-bridged and node-http vs ' +
      'undici-request; the h3 rows\' …-h1 / -h2 / -h3 vs undici-request-h2): req/s above 1.00× is faster, CPU and latency below 1.00× are better.',
    '',
  );
  const perf = perfTable(results);
  if (perf) report.push('## Where the time goes (--perf)', '', perfNote, '', perf, '');
  return report;
}
