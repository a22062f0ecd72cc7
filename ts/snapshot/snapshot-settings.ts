// A SnapshotRecorder's options, checked once: a bad value throws InvalidArgumentError naming the
// option when the recorder (or the SnapshotAgent that builds it) is constructed.
import { InvalidArgumentError } from '../core/errors.js';
import type { HeaderPolicy } from './snapshot-headers.js';
import type { SnapshotMatchOptions } from './snapshot-key.js';
import type { RecorderMode, RecorderRequestInfo, SnapshotRecorderOptions } from './snapshot-options.js';

const MODES = ['record', 'playback', 'update'] as const;
const DEFAULT_FLUSH_INTERVAL = 30_000;

/** The option names a SnapshotRecorder takes (a SnapshotAgent keeps them from the Agent it builds). */
export const SNAPSHOT_OPTIONS = [
  'mode',
  'snapshotPath',
  'maxSnapshots',
  'autoFlush',
  'flushInterval',
  'matchHeaders',
  'ignoreHeaders',
  'excludeHeaders',
  'matchBody',
  'normalizeBody',
  'matchQuery',
  'normalizeQuery',
  'caseSensitive',
  'shouldRecord',
  'shouldPlayback',
  'excludeUrls',
  'redactSecrets',
] as const satisfies readonly (keyof SnapshotRecorderOptions)[];

type Hook = (requestOpts: RecorderRequestInfo) => boolean;

export interface SnapshotSettings {
  mode: RecorderMode;
  snapshotPath: string | undefined;
  maxSnapshots: number;
  autoFlush: boolean;
  flushInterval: number;
  match: SnapshotMatchOptions;
  headers: HeaderPolicy;
  shouldRecord: Hook | undefined;
  shouldPlayback: Hook | undefined;
  excludeUrls: readonly (string | RegExp)[];
}

export function kind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function fail(message: string): never {
  throw new InvalidArgumentError(message);
}

function optionalBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(`options.${name} must be a boolean, got ${kind(value)}`);
  return value;
}

function optionalFunction<F>(name: string, value: unknown): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') fail(`options.${name} must be a function, got ${kind(value)}`);
  return value as F;
}

function optionalNames(name: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    fail(`options.${name} must be an array of header names (strings)`);
  }
  return [...value];
}

export function snapshotSettings(options: SnapshotRecorderOptions): SnapshotSettings {
  const mode = options.mode ?? 'record';
  if (!(MODES as readonly unknown[]).includes(mode)) {
    fail(`Invalid snapshot mode: ${String(mode)}. Must be one of: ${MODES.join(', ')}`);
  }
  const { snapshotPath, maxSnapshots = Infinity, flushInterval = DEFAULT_FLUSH_INTERVAL, excludeUrls = [] } = options;
  if (snapshotPath !== undefined && (typeof snapshotPath !== 'string' || snapshotPath === '')) {
    fail(`options.snapshotPath must be a non-empty string, got ${kind(snapshotPath)}`);
  }
  if (typeof maxSnapshots !== 'number' || !(maxSnapshots >= 1) || (maxSnapshots !== Infinity && !Number.isInteger(maxSnapshots))) {
    fail('options.maxSnapshots must be a positive integer or Infinity');
  }
  if (typeof flushInterval !== 'number' || !Number.isFinite(flushInterval) || flushInterval <= 0) {
    fail('options.flushInterval must be a positive number of milliseconds');
  }
  const autoFlush = optionalBoolean('autoFlush', options.autoFlush, false);
  if (autoFlush && snapshotPath === undefined) fail('options.autoFlush needs options.snapshotPath');
  if (!Array.isArray(excludeUrls) || !excludeUrls.every((p) => typeof p === 'string' || p instanceof RegExp)) {
    fail('options.excludeUrls must be an array of strings and RegExps');
  }
  const redact = optionalBoolean('redactSecrets', options.redactSecrets, true);
  const exclude = new Set((optionalNames('excludeHeaders', options.excludeHeaders) ?? []).map((n) => n.toLowerCase()));
  const matchHeaders = optionalNames('matchHeaders', options.matchHeaders);
  const ignoreHeaders = optionalNames('ignoreHeaders', options.ignoreHeaders);
  const normalizeBody = optionalFunction<SnapshotMatchOptions['normalizeBody']>('normalizeBody', options.normalizeBody);
  const normalizeQuery = optionalFunction<SnapshotMatchOptions['normalizeQuery']>('normalizeQuery', options.normalizeQuery);
  const match: SnapshotMatchOptions = {
    excludeHeaders: exclude,
    redactSecrets: redact,
    matchBody: optionalBoolean('matchBody', options.matchBody, true),
    matchQuery: optionalBoolean('matchQuery', options.matchQuery, true),
    caseSensitive: optionalBoolean('caseSensitive', options.caseSensitive, false),
  };
  if (matchHeaders !== undefined) match.matchHeaders = matchHeaders;
  if (ignoreHeaders !== undefined) match.ignoreHeaders = ignoreHeaders;
  if (normalizeBody !== undefined) match.normalizeBody = normalizeBody;
  if (normalizeQuery !== undefined) match.normalizeQuery = normalizeQuery;
  return {
    mode,
    snapshotPath,
    maxSnapshots,
    autoFlush,
    flushInterval,
    match,
    headers: { exclude, redact },
    shouldRecord: optionalFunction('shouldRecord', options.shouldRecord),
    shouldPlayback: optionalFunction('shouldPlayback', options.shouldPlayback),
    excludeUrls: [...excludeUrls],
  };
}

/** Whether `url` is kept out of snapshots: a string pattern matches as a substring of the full URL. */
export function isExcludedUrl(settings: SnapshotSettings, url: string): boolean {
  return settings.excludeUrls.some((pattern) => {
    if (typeof pattern === 'string') return url.includes(pattern);
    pattern.lastIndex = 0;
    return pattern.test(url);
  });
}
