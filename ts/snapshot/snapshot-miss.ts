// Why a request found no snapshot: the recorded request that came closest and the first matched
// field where the two differ, so that a failing playback says what to fix instead of just "no".
import type { SnapshotRecord } from './snapshot-format.js';
import type { SnapshotKey } from './snapshot-key.js';

export interface MissCandidate {
  key: SnapshotKey;
  record: SnapshotRecord;
}

const SHOWN = 80;

function show(value: string): string {
  const text = value.length > SHOWN ? `${value.slice(0, SHOWN)}…` : value;
  return JSON.stringify(text);
}

function bodyText(body: SnapshotKey['body']): string | null {
  if (body === null) return null;
  return 'text' in body ? body.text : `base64:${body.base64}`;
}

/** Where two texts part, with a little context on each side. */
function bodyDifference(recorded: string, got: string): string {
  let at = 0;
  while (at < recorded.length && at < got.length && recorded[at] === got[at]) at++;
  const from = Math.max(0, at - 20);
  const clip = (s: string): string => `${from > 0 ? '…' : ''}${s.slice(from, at + 40)}`;
  return `body differs at character ${at}: recorded ${show(clip(recorded))}, request has ${show(clip(got))}`;
}

function headerDifference(recorded: SnapshotKey['headers'], got: SnapshotKey['headers']): string | undefined {
  const a = new Map(recorded);
  const b = new Map(got);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  for (const name of names) {
    const ra = a.get(name);
    const rb = b.get(name);
    if (ra === undefined) return `header ${show(name)}: the request has ${show(rb!.join(', '))}, the recording has none`;
    if (rb === undefined) return `header ${show(name)}: recorded ${show(ra.join(', '))}, the request has none`;
    if (JSON.stringify(ra) !== JSON.stringify(rb)) {
      return `header ${show(name)}: recorded ${show(ra.join(', '))}, request has ${show(rb.join(', '))}`;
    }
  }
  return undefined;
}

/** The first matched field, in request order, where `recorded` and `got` differ. */
function firstDifference(recorded: SnapshotKey, got: SnapshotKey): string | undefined {
  if (recorded.method !== got.method) return `method: recorded ${show(recorded.method)}, request has ${show(got.method)}`;
  if (recorded.origin !== got.origin) return `origin: recorded ${show(recorded.origin)}, request has ${show(got.origin)}`;
  if (recorded.pathname !== got.pathname) {
    return `path: recorded ${show(recorded.pathname)}, request has ${show(got.pathname)}`;
  }
  if (recorded.query !== got.query) {
    const query = (q: string | null): string => (q === null || q === '' ? 'none' : show(q));
    return `query: recorded ${query(recorded.query)}, request has ${query(got.query)}`;
  }
  const headers = headerDifference(recorded.headers, got.headers);
  if (headers !== undefined) return headers;
  const rb = bodyText(recorded.body);
  const gb = bodyText(got.body);
  if (rb === gb) return undefined;
  if (rb === null) return `body: the request has one (${show(gb!)}), the recording has none`;
  if (gb === null) return `body: recorded ${show(rb)}, the request has none`;
  return bodyDifference(rb, gb);
}

function score(recorded: SnapshotKey, got: SnapshotKey): number {
  const names = new Set([...recorded.headers.map(([n]) => n), ...got.headers.map(([n]) => n)]);
  const theirs = new Map(recorded.headers);
  const same = got.headers.filter(([n, v]) => JSON.stringify(theirs.get(n)) === JSON.stringify(v)).length;
  // Where a request goes outweighs how it is made: a different path is further off than a different header.
  return (
    (recorded.origin === got.origin ? 16 : 0) +
    (recorded.pathname === got.pathname ? 16 : 0) +
    (recorded.method === got.method ? 8 : 0) +
    (recorded.query === got.query ? 4 : 0) +
    (JSON.stringify(recorded.body) === JSON.stringify(got.body) ? 2 : 0) +
    (names.size === 0 ? 1 : same / names.size)
  );
}

/** Lines explaining a miss; the earliest recorded of equally close candidates is named. */
export function explainSnapshotMiss(got: SnapshotKey, candidates: readonly MissCandidate[]): string {
  let best: MissCandidate | undefined;
  let bestScore = -1;
  for (const candidate of candidates) {
    const s = score(candidate.key, got);
    if (s > bestScore) {
      best = candidate;
      bestScore = s;
    }
  }
  if (best === undefined) return 'No snapshots are recorded.';
  const { request, timestamp } = best.record;
  const difference = firstDifference(best.key, got) ?? 'none in the matched fields';
  return `Closest recorded request: ${request.method} ${request.url} (recorded ${timestamp})\nFirst difference: ${difference}`;
}
