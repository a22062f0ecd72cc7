// SnapshotRecorder's option types, apart from the class so that the settings check can name them
// without importing the recorder (which imports the settings).
import type { DispatchOptions } from '../core/types.js';

export type RecorderMode = 'record' | 'playback' | 'update';
/** What shouldRecord and shouldPlayback see: the dispatch options, the origin as a string. */
export type RecorderRequestInfo = DispatchOptions & { origin: string };

export interface SnapshotRecorderOptions {
  /** 'record' (default): real requests, responses kept; 'playback': snapshots only; 'update': both. */
  mode?: RecorderMode;
  /** The file snapshots are loaded from and saved to. */
  snapshotPath?: string;
  /** Requests (snapshots) kept in memory at most, the oldest going first; Infinity by default. */
  maxSnapshots?: number;
  /** Save to snapshotPath every flushInterval ms when something changed; false by default. */
  autoFlush?: boolean;
  /** Milliseconds between automatic saves; 30000 by default. */
  flushInterval?: number;
  /** Only these request headers take part in matching (default: all). */
  matchHeaders?: string[];
  /** Request headers left out of matching, though still stored. */
  ignoreHeaders?: string[];
  /** Headers neither stored (request and response) nor matched; names compare case-insensitively. */
  excludeHeaders?: string[];
  /** Whether the request body takes part in matching; true by default. */
  matchBody?: boolean;
  /** The body as matched (at record and playback time); only with matchBody. */
  normalizeBody?: (body: string | Buffer | null | undefined) => string;
  /** Whether the query takes part in matching; true by default. */
  matchQuery?: boolean;
  /** The query as matched; only with matchQuery. By default: the parameters, sorted by name. */
  normalizeQuery?: (query: URLSearchParams) => string;
  /** Whether header names match case-sensitively; false by default. */
  caseSensitive?: boolean;
  /** Whether a request is recorded (record and update modes). */
  shouldRecord?: (requestOpts: RecorderRequestInfo) => boolean;
  /** Whether a request is played back (playback and update modes). */
  shouldPlayback?: (requestOpts: RecorderRequestInfo) => boolean;
  /** URLs kept out of snapshots: a string matches as a prefix or substring of the full URL. */
  excludeUrls?: (string | RegExp)[];
  /**
   * Mask the values of authorization, proxy-authorization, cookie and set-cookie in snapshots
   * (true by default). Masked headers cannot take part in matching; false stores and matches them
   * in clear.
   */
  redactSecrets?: boolean;
}
