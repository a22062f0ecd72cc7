// SnapshotAgent: a MockAgent that records real request/response pairs to a snapshot file and plays
// them back (spec: SnapshotAgent). record sends every request to the real agent and keeps the
// response; playback answers from the snapshots only; update plays back what it has and records
// the rest. Requests excluded from snapshots (excludeUrls, shouldRecord / shouldPlayback saying no)
// go through the MockAgent as usual: its interceptors, then the network if net connect allows it;
// except in playback mode, where one shouldPlayback refuses is a miss.
import {
  ClientClosedError,
  ClientDestroyedError,
  InvalidArgumentError,
  MockNotMatchedError,
} from '../core/errors.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { MockAgent } from '../mock/mock-agent.js';
import { MockReplay } from '../mock/mock-dispatch.js';
import { kMockAgentPolicy, refuse } from '../mock/mock-dispatcher.js';
import { normalizeOrigin } from '../mock/mock-request.js';
import { readSnapshotFile, writeSnapshotFile } from './snapshot-file.js';
import { checkEntries, type SnapshotEntry, type SnapshotRecord, type SnapshotRequest } from './snapshot-format.js';
import { storedHeaders, type HeaderPolicy } from './snapshot-headers.js';
import { snapshotKey, type SnapshotKey, type SnapshotMatchOptions } from './snapshot-key.js';
import { explainSnapshotMiss } from './snapshot-miss.js';
import { SnapshotRecorder } from './snapshot-recorder.js';
import { replyFromSnapshot } from './snapshot-reply.js';
import { requestBodyBytes, requestUrl, storedRequest } from './snapshot-request.js';
import { RecordingHandler, type CapturedResponse } from './snapshot-tee.js';

const MODES = ['record', 'playback', 'update'] as const;
const DEFAULT_FLUSH_INTERVAL = 30_000;

/** The snapshot-only option names, kept away from the Agent the MockAgent builds. */
const SNAPSHOT_OPTIONS = [
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
] as const;

interface Settings {
  mode: SnapshotAgent.Mode;
  snapshotPath: string | undefined;
  maxSnapshots: number;
  autoFlush: boolean;
  flushInterval: number;
  match: SnapshotMatchOptions;
  headers: HeaderPolicy;
  shouldRecord: ((requestOpts: SnapshotAgent.RequestInfo) => boolean) | undefined;
  shouldPlayback: ((requestOpts: SnapshotAgent.RequestInfo) => boolean) | undefined;
  excludeUrls: readonly (string | RegExp)[];
}

function kind(value: unknown): string {
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

function settingsOf(options: SnapshotAgent.Options): Settings {
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

/** The options the MockAgent (and the Agent it builds) should see. */
function mockOptionsOf(options: SnapshotAgent.Options): MockAgent.Options {
  const rest: Record<string, unknown> = { ...options };
  for (const name of SNAPSHOT_OPTIONS) delete rest[name];
  return rest as MockAgent.Options;
}

export class SnapshotAgent extends MockAgent {
  readonly #settings: Settings;
  readonly #recorder: SnapshotRecorder;
  /** Replies being delivered, so that close() can wait for them and destroy() can fail them. */
  readonly #replays = new Set<MockReplay>();
  readonly #replaysDone: (() => void)[] = [];
  /** Requests whose body is being read or whose snapshots are loading, before they are routed. */
  readonly #preparing = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  /** Something was recorded or replaced since the snapshot file was last written or read. */
  #dirty = false;
  /** The first-request load of snapshotPath; undefined until started. */
  #autoLoad: Promise<void> | undefined;
  #autoLoadDone = false;
  /** Set once loadSnapshots, replaceSnapshots or clearSnapshots ran: no automatic load then. */
  #touched = false;
  #loadError: Error | undefined;
  /** The file the snapshots were loaded from when it did not exist, for the miss message. */
  #missingFile: string | undefined;
  /** close() was called: requests still being prepared finish, new ones are refused. */
  #closing = false;
  #saving: Promise<unknown> = Promise.resolve();

  constructor(options?: SnapshotAgent.Options) {
    if (options != null && typeof options !== 'object') {
      throw new InvalidArgumentError(`SnapshotAgent options must be an object, got ${kind(options)}`);
    }
    const settings = settingsOf(options ?? {});
    super(mockOptionsOf(options ?? {}));
    this.#settings = settings;
    this.#recorder = new SnapshotRecorder({
      maxSnapshots: settings.maxSnapshots,
      keyOf: (request: SnapshotRequest): SnapshotKey => snapshotKey(request, settings.match),
    });
    // Playback never writes, so it needs no flushing.
    if (settings.autoFlush && settings.mode !== 'playback') {
      this.#timer = setInterval(() => this.#flush(), settings.flushInterval);
      // Tests and scripts end when their work does, not when the next flush is due.
      this.#timer.unref();
    }
  }

  /** The current mode: 'record', 'playback' or 'update'. */
  getMode(): SnapshotAgent.Mode {
    return this.#settings.mode;
  }

  /** The in-memory snapshots: getSnapshots() lists the interactions, size() counts them. */
  getRecorder(): SnapshotRecorder {
    return this.#recorder;
  }

  /** Writes every snapshot held to `filePath` (default: options.snapshotPath), atomically. */
  async saveSnapshots(filePath?: string): Promise<void> {
    const path = this.#pathFor('saveSnapshots', filePath);
    const entries = this.#recorder.getEntries();
    const toDefault = path === this.#settings.snapshotPath;
    if (toDefault) this.#dirty = false;
    const write = this.#saving.then(() => writeSnapshotFile(path, entries));
    this.#saving = write.catch(() => {});
    try {
      await write;
    } catch (err) {
      if (toDefault) this.#dirty = true;
      throw err;
    }
  }

  /**
   * Replaces the snapshots held with those in `filePath` (default: options.snapshotPath). A missing
   * file holds none; an unreadable or malformed one rejects, naming the problem.
   */
  async loadSnapshots(filePath?: string): Promise<void> {
    const path = this.#pathFor('loadSnapshots', filePath);
    this.#touched = true;
    const entries = await readSnapshotFile(path);
    this.#recorder.replace((entries ?? []).map((e) => e.snapshot));
    this.#missingFile = entries === null ? path : undefined;
    this.#loadError = undefined;
    this.#dirty = false;
  }

  /** What is held for the request `requestOpts` describes (origin, path, method, headers, body), or null. */
  getSnapshotInfo(requestOpts: SnapshotAgent.RequestInfo): SnapshotRecorder.Info | null {
    return this.#recorder.info(this.#hashOf(requestOpts));
  }

  /** Forgets the recordings of one request; false when none were held. */
  deleteSnapshot(requestOpts: SnapshotAgent.RequestInfo): boolean {
    const deleted = this.#recorder.delete(this.#hashOf(requestOpts));
    if (deleted) this.#dirty = true;
    return deleted;
  }

  /** Playback starts over: each request gets its first recorded response again. */
  resetCallCounts(): void {
    this.#recorder.resetCallCounts();
  }

  #hashOf(requestOpts: SnapshotAgent.RequestInfo): string {
    if (requestOpts === null || typeof requestOpts !== 'object' || requestOpts.origin == null) {
      throw new InvalidArgumentError('requestOpts must be an object with an origin');
    }
    const opts = { ...requestOpts, method: requestOpts.method ?? 'GET' } as DispatchOptions;
    const origin = normalizeOrigin(opts.origin!);
    const body = requestBodyBytes(opts.body);
    // A streamed body cannot be read here; such requests are identified without one.
    const bytes = body instanceof Promise ? undefined : body;
    return this.#recorder.identify(storedRequest(opts, requestUrl(opts, origin), bytes, this.#settings.headers)).hash;
  }

  /** Forgets every snapshot held (the file is untouched until the next save). */
  clearSnapshots(): void {
    this.#touched = true;
    this.#loadError = undefined;
    this.#missingFile = undefined;
    this.#recorder.clear();
    this.#dirty = true;
  }

  /** Holds exactly `entries` ({ hash, snapshot } as in the file); hashes are derived again. */
  replaceSnapshots(entries: readonly SnapshotEntry[]): void {
    const checked = checkEntries(entries, 'replaceSnapshots(entries)');
    this.#touched = true;
    this.#loadError = undefined;
    this.#missingFile = undefined;
    this.#recorder.replace(checked.map((e) => e.snapshot));
    this.#dirty = true;
  }

  /**
   * Always returns a boolean: problems with a request (a bad option, a snapshot file that cannot
   * be loaded, a playback miss) reach the handler's onResponseError.
   */
  override dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    const controlled = toControllerHandler(handler);
    try {
      return this.#dispatch(opts, controlled);
    } catch (err) {
      refuse(controlled, err as Error);
      return false;
    }
  }

  /** Waits for requests in flight, then writes the snapshot file if anything changed (record and update). */
  override close(): Promise<void>;
  override close(callback: (err: Error | null, data: null) => void): void;
  override close(callback?: (err: Error | null, data: null) => void): Promise<void> | void {
    this.#stopTimer();
    this.#closing = true;
    const done = (async () => {
      await Promise.allSettled([...this.#preparing]);
      await super.close();
      await this.#replaysSettled();
      await this.#saving;
      // A failed automatic flush left the snapshots dirty: this save retries it and reports failure.
      const { mode, snapshotPath } = this.#settings;
      if (mode !== 'playback' && snapshotPath !== undefined && this.#dirty) await this.saveSnapshots();
    })();
    if (callback === undefined) return done;
    done.then(
      () => callback(null, null),
      (err: Error) => callback(err, null),
    );
  }

  /** Aborts everything in flight; nothing is saved. */
  protected override onDestroy(err: Error | null): Promise<void> {
    this.#stopTimer();
    const replays = [...this.#replays];
    return super.onDestroy(err).then(() => {
      for (const replay of replays) replay.fail(err ?? new ClientDestroyedError());
    });
  }

  #dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object.');
    if (opts.origin == null || opts.origin === '') throw new InvalidArgumentError('opts.origin must be a non-empty string or URL.');
    const refused = this.refusal(opts);
    if (refused !== null) throw refused;
    if (this.#closing) throw new ClientClosedError();
    const origin = normalizeOrigin(opts.origin);
    const url = requestUrl(opts, origin);
    if (this.#excluded(url)) return super.dispatch(opts, handler);
    const body = requestBodyBytes(opts.body);
    const loading = this.#loading();
    if (!(body instanceof Promise) && loading === undefined) return this.#route(opts, origin, url, body, handler);
    // A streamed body is spent once read: what is sent from here on is the bytes read.
    const work = Promise.all([body, loading]).then(([bytes]) => {
      const send = body instanceof Promise ? { ...opts, body: bytes ?? null } : opts;
      this.#route(send, origin, url, bytes, handler);
    });
    const tracked = work.catch((err: Error) => refuse(handler, err));
    this.#preparing.add(tracked);
    void tracked.finally(() => this.#preparing.delete(tracked));
    return true;
  }

  /** Plays back, records, or hands over to the MockAgent, as the mode and the should* hooks say. */
  #route(
    opts: DispatchOptions,
    origin: string,
    url: string,
    body: Buffer | undefined,
    handler: DispatchHandler,
  ): boolean {
    if (this.#loadError !== undefined) throw this.#loadError;
    const { mode, shouldPlayback, shouldRecord } = this.#settings;
    const info: SnapshotAgent.RequestInfo = { ...opts, origin };
    const mayPlay = mode !== 'record' && shouldPlayback?.(info) !== false;
    const mayRecord = mode !== 'playback' && shouldRecord?.(info) !== false;
    // In playback mode a request shouldPlayback refuses is a miss, as undici: never the network.
    if (!mayPlay && !mayRecord && mode !== 'playback') return super.dispatch(opts, handler);
    const request = storedRequest(opts, url, body, this.#settings.headers);
    const identity = this.#recorder.identify(request);
    if (mayPlay) {
      const record = this.#recorder.next(identity.hash);
      if (record !== undefined) {
        this.#history(opts);
        this.#replay(record, handler);
        return true;
      }
    }
    if (mode === 'playback') throw new MockNotMatchedError(this.#missMessage(request, identity.key));
    if (!mayRecord) return super.dispatch(opts, handler);
    this.#history(opts);
    const tee = new RecordingHandler(handler, (response) => this.#keep(request, identity, response));
    return this[kMockAgentPolicy].real.dispatch(opts.origin == null ? { ...opts, origin } : opts, tee);
  }

  #keep(request: SnapshotRequest, identity: { key: SnapshotKey; hash: string }, response: CapturedResponse): void {
    const policy = this.#settings.headers;
    const record: SnapshotRecord = {
      request,
      response: {
        statusCode: response.statusCode,
        headers: storedHeaders(response.headers, policy),
        body: response.body.toString('base64'),
        trailers: storedHeaders(response.trailers, policy),
      },
      timestamp: new Date().toISOString(),
    };
    this.#recorder.record(record, identity);
    this.#dirty = true;
  }

  #replay(record: SnapshotRecord, handler: DispatchHandler): void {
    const replay = new MockReplay(handler, (r) => {
      this.#replays.delete(r);
      if (this.#replays.size === 0) for (const wake of this.#replaysDone.splice(0)) wake();
    });
    this.#replays.add(replay);
    replay.start();
    replay.later(undefined, () => replay.respond(replyFromSnapshot(record.response)));
  }

  #missMessage(request: SnapshotRequest, key: SnapshotKey): string {
    const headline = `No snapshot found for ${request.method} ${request.url} (mode: ${this.#settings.mode})`;
    const missing = this.#missingFile;
    if (missing !== undefined && this.#recorder.size() === 0) {
      return `${headline}\nThe snapshot file ${missing} does not exist; record it first (mode 'record').`;
    }
    return `${headline}\n${explainSnapshotMiss(key, this.#recorder.candidates())}`;
  }

  /** Call history, when enabled, lists snapshot traffic as it lists mocked requests. */
  #history(opts: DispatchOptions): void {
    this[kMockAgentPolicy].record(opts);
  }

  #excluded(url: string): boolean {
    return this.#settings.excludeUrls.some((pattern) => {
      if (typeof pattern === 'string') return url.includes(pattern);
      pattern.lastIndex = 0;
      return pattern.test(url);
    });
  }

  /** The automatic load of snapshotPath (playback and update) while it is under way; undefined after. */
  #loading(): Promise<void> | undefined {
    const { mode, snapshotPath } = this.#settings;
    if (this.#autoLoad === undefined) {
      if (mode === 'record' || snapshotPath === undefined || this.#touched) return undefined;
      this.#autoLoad = this.loadSnapshots()
        .catch((err: Error) => {
          // Every request fails with it until snapshots are loaded or replaced by hand.
          this.#loadError = err;
        })
        .finally(() => {
          this.#autoLoadDone = true;
        });
    }
    return this.#autoLoadDone ? undefined : this.#autoLoad;
  }

  #pathFor(operation: string, filePath: string | undefined): string {
    const path = filePath ?? this.#settings.snapshotPath;
    if (typeof path !== 'string' || path === '') {
      // undici's words; which call it was is in the stack.
      void operation;
      throw new InvalidArgumentError('Snapshot path is required');
    }
    return path;
  }

  #flush(): void {
    const { snapshotPath } = this.#settings;
    if (!this.#dirty || snapshotPath === undefined) return;
    // Nobody awaits a timer: a failed save leaves the snapshots dirty, and close() retries and reports it.
    this.saveSnapshots().catch(() => {});
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #replaysSettled(): Promise<void> {
    if (this.#replays.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#replaysDone.push(resolve));
  }
}

export declare namespace SnapshotAgent {
  type Mode = 'record' | 'playback' | 'update';
  /** What shouldRecord and shouldPlayback see: the dispatch options, the origin as a string. */
  type RequestInfo = DispatchOptions & { origin: string };
  interface Options extends MockAgent.Options {
    /** 'record' (default): real requests, responses kept; 'playback': snapshots only; 'update': both. */
    mode?: Mode;
    /** The file snapshots are loaded from and saved to. */
    snapshotPath?: string;
    /** Interactions kept in memory at most (the oldest goes first); Infinity by default. */
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
    shouldRecord?: (requestOpts: RequestInfo) => boolean;
    /** Whether a request is played back (playback and update modes). */
    shouldPlayback?: (requestOpts: RequestInfo) => boolean;
    /** URLs kept out of snapshots: a string matches as a prefix or substring of the full URL. */
    excludeUrls?: (string | RegExp)[];
    /**
     * Mask the values of authorization, proxy-authorization, cookie and set-cookie in snapshots
     * (true by default). Masked headers cannot take part in matching; false stores and matches them
     * in clear.
     */
    redactSecrets?: boolean;
  }
}
