// The snapshot file format (spec: Snapshot file format): the record types, checking what a file or a
// caller hands in, and writing entries in a stable order so that the same traffic gives the same file.
import { InvalidArgumentError } from '../core/errors.js';

/** Header name to value; a repeated header keeps every value, as an array. */
export type SnapshotHeaders = Record<string, string | string[]>;

export interface SnapshotRequest {
  method: string;
  /** The full URL, query included. */
  url: string;
  headers: SnapshotHeaders;
  /** Absent when the request had no body (or an empty one). */
  body?: string;
  /**
   * Present, as 'base64', only when the body bytes are not valid UTF-8: `body` then holds them in
   * base64, so that binary request bodies survive the file byte for byte.
   */
  bodyEncoding?: 'base64';
}

export interface SnapshotResponse {
  statusCode: number;
  headers: SnapshotHeaders;
  /** The body bytes, base64 encoded. */
  body: string;
  trailers: SnapshotHeaders;
}

/** One recorded interaction. */
export interface SnapshotRecord {
  request: SnapshotRequest;
  response: SnapshotResponse;
  /** When it was recorded, ISO 8601. */
  timestamp: string;
}

/** One element of the file's array. */
export interface SnapshotEntry {
  hash: string;
  snapshot: SnapshotRecord;
}

type Problem = (message: string) => never;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkHeaders(value: unknown, where: string, fail: Problem): SnapshotHeaders {
  if (!isObject(value)) fail(`${where} must be an object`);
  const out: SnapshotHeaders = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v) && v.every((item) => typeof item === 'string')) out[name] = [...v];
    else fail(`${where}.${name} must be a string or an array of strings`);
  }
  return out;
}

/**
 * The recordings of one entry: ferro's `snapshot.response`, or undici's `snapshot.responses[]`
 * (sequential responses to the same request), so files recorded with undici play back.
 */
function checkRecords(value: unknown, where: string, fail: Problem): SnapshotRecord[] {
  if (!isObject(value)) fail(`${where} must be an object`);
  const { responses, ...rest } = value as Record<string, unknown>;
  if (rest.response === undefined && Array.isArray(responses)) {
    return responses.map((response, i) => checkRecord({ ...rest, response }, `${where}.responses[${i}]`, fail));
  }
  return [checkRecord(value, where, fail)];
}

function checkRecord(value: unknown, where: string, fail: Problem): SnapshotRecord {
  if (!isObject(value)) fail(`${where} must be an object`);
  const { request, response, timestamp } = value;
  if (!isObject(request)) fail(`${where}.request must be an object`);
  if (!isObject(response)) fail(`${where}.response must be an object`);
  if (typeof request.method !== 'string' || request.method === '') fail(`${where}.request.method must be a non-empty string`);
  if (typeof request.url !== 'string') fail(`${where}.request.url must be a string`);
  try {
    new URL(request.url);
  } catch {
    fail(`${where}.request.url is not a valid URL: ${JSON.stringify(request.url)}`);
  }
  if (request.body !== undefined && typeof request.body !== 'string') fail(`${where}.request.body must be a string`);
  if (request.bodyEncoding !== undefined && request.bodyEncoding !== 'base64') {
    fail(`${where}.request.bodyEncoding must be 'base64' when present`);
  }
  const { statusCode } = response;
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 999) {
    fail(`${where}.response.statusCode must be an integer from 100 to 999`);
  }
  if (typeof response.body !== 'string') fail(`${where}.response.body must be a base64 string`);
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp))) {
    fail(`${where}.timestamp must be an ISO 8601 date`);
  }
  const req: SnapshotRequest = {
    method: request.method,
    url: request.url,
    headers: checkHeaders(request.headers ?? {}, `${where}.request.headers`, fail),
  };
  if (request.body !== undefined) req.body = request.body;
  if (request.bodyEncoding === 'base64') req.bodyEncoding = 'base64';
  return {
    request: req,
    response: {
      statusCode,
      headers: checkHeaders(response.headers ?? {}, `${where}.response.headers`, fail),
      body: response.body,
      trailers: checkHeaders(response.trailers ?? {}, `${where}.response.trailers`, fail),
    },
    timestamp,
  };
}

/**
 * The entries in `value` (a parsed file, or replaceSnapshots' argument), checked field by field; a
 * bad one throws InvalidArgumentError naming the entry and the field. A missing hash reads as ''.
 * Hashes are kept only as written: the recorder derives them again from each request under the
 * agent's matching options.
 */
export function checkEntries(value: unknown, source: string): SnapshotEntry[] {
  const fail: Problem = (message) => {
    throw new InvalidArgumentError(`${source}: ${message}`);
  };
  if (!Array.isArray(value)) fail('expected a JSON array of { hash, snapshot } entries');
  return (value as unknown[]).flatMap((entry, i) => {
    if (!isObject(entry)) fail(`entry ${i} must be an object`);
    if (entry.hash !== undefined && typeof entry.hash !== 'string') fail(`entry ${i}: hash must be a string`);
    const hash = (entry.hash as string | undefined) ?? '';
    return checkRecords(entry.snapshot, `entry ${i}: snapshot`, fail).map((snapshot) => ({ hash, snapshot }));
  });
}

/** A record rebuilt with its fields in the file's order, so that the JSON text is canonical. */
function ordered(record: SnapshotRecord): SnapshotRecord {
  const { request, response } = record;
  const req: SnapshotRequest = { method: request.method, url: request.url, headers: request.headers };
  if (request.body !== undefined) req.body = request.body;
  if (request.bodyEncoding !== undefined) req.bodyEncoding = request.bodyEncoding;
  return {
    request: req,
    response: {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
      trailers: response.trailers,
    },
    timestamp: record.timestamp,
  };
}

/** Request and response, without the timestamp: what makes two recordings the same. */
function content(record: SnapshotRecord): string {
  const { request, response } = ordered(record);
  return JSON.stringify([request, response]);
}

/**
 * The file text for `entries`: sorted by hash (a stable sort, so identical requests stay in recorded
 * order), fields in a fixed order, two-space indented. An entry identical to the one at the same
 * place in `previous` (same hash, same occurrence) keeps its old timestamp, so re-recording
 * unchanged traffic leaves the file byte for byte as it was.
 */
export function serializeEntries(entries: readonly SnapshotEntry[], previous: readonly SnapshotEntry[] = []): string {
  const before = new Map<string, SnapshotRecord[]>();
  for (const { hash, snapshot } of previous) {
    const list = before.get(hash);
    if (list === undefined) before.set(hash, [snapshot]);
    else list.push(snapshot);
  }
  const seen = new Map<string, number>();
  const sorted = [...entries].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  const out = sorted.map(({ hash, snapshot }) => {
    const n = seen.get(hash) ?? 0;
    seen.set(hash, n + 1);
    const old = before.get(hash)?.[n];
    const record = ordered(snapshot);
    if (old !== undefined && content(old) === content(record)) record.timestamp = old.timestamp;
    return { hash, snapshot: record };
  });
  return `${JSON.stringify(out, null, 2)}\n`;
}
