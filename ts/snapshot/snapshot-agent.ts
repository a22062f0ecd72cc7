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
import type { SnapshotEntry, SnapshotRecord, SnapshotRequest } from './snapshot-format.js';
import type { SnapshotKey } from './snapshot-key.js';
import { explainSnapshotMiss } from './snapshot-miss.js';
import { recorderCore, SnapshotRecorder, type RecorderCore } from './snapshot-recorder.js';
import { replyFromSnapshot } from './snapshot-reply.js';
import { requestBodyBytes, requestUrl, storedRequest } from './snapshot-request.js';
import { isExcludedUrl, kind, SNAPSHOT_OPTIONS, snapshotSettings } from './snapshot-settings.js';
import { RecordingHandler } from './snapshot-tee.js';

/** The options the MockAgent (and the Agent it builds) should see. */
function mockOptionsOf(options: SnapshotAgent.Options): MockAgent.Options {
  const rest: Record<string, unknown> = { ...options };
  for (const name of SNAPSHOT_OPTIONS) delete rest[name];
  return rest as MockAgent.Options;
}

/** The options the recorder should see. */
function recorderOptionsOf(options: SnapshotAgent.Options): SnapshotRecorder.Options {
  const picked: Record<string, unknown> = {};
  for (const name of SNAPSHOT_OPTIONS) if (options[name] !== undefined) picked[name] = options[name];
  return picked as SnapshotRecorder.Options;
}

export class SnapshotAgent extends MockAgent {
  readonly #recorder: SnapshotRecorder;
  readonly #core: RecorderCore;
  /** Replies being delivered, so that close() can wait for them and destroy() can fail them. */
  readonly #replays = new Set<MockReplay>();
  readonly #replaysDone: (() => void)[] = [];
  /** Requests whose body is being read or whose snapshots are loading, before they are routed. */
  readonly #preparing = new Set<Promise<void>>();
  /** The first-request load of snapshotPath; undefined until started. */
  #autoLoad: Promise<void> | undefined;
  #autoLoadDone = false;
  /** Set once loadSnapshots, replaceSnapshots or clearSnapshots ran: no automatic load then. */
  #touched = false;
  #loadError: Error | undefined;
  /** close() was called: requests still being prepared finish, new ones are refused. */
  #closing = false;

  constructor(options?: SnapshotAgent.Options) {
    if (options != null && typeof options !== 'object') {
      throw new InvalidArgumentError(`SnapshotAgent options must be an object, got ${kind(options)}`);
    }
    // The snapshot options are checked before the MockAgent's Agent is built; the recorder (whose
    // flush timer would outlive a MockAgent that refused its options) after.
    const recorderOptions = recorderOptionsOf(options ?? {});
    snapshotSettings(recorderOptions);
    super(mockOptionsOf(options ?? {}));
    this.#recorder = new SnapshotRecorder(recorderOptions);
    this.#core = recorderCore(this.#recorder);
  }

  /** The current mode: 'record', 'playback' or 'update'. */
  getMode(): SnapshotRecorder.SnapshotRecorderMode {
    return this.#core.settings.mode;
  }

  /** The recorder holding the snapshots (getSnapshots(), size(), findSnapshot(), …). */
  getRecorder(): SnapshotRecorder {
    return this.#recorder;
  }

  /** Writes every snapshot held to `filePath` (default: options.snapshotPath), atomically. */
  saveSnapshots(filePath?: string): Promise<void> {
    return this.#recorder.saveSnapshots(filePath);
  }

  /**
   * Replaces the snapshots held with those in `filePath` (default: options.snapshotPath). A missing
   * file holds none; an unreadable or malformed one rejects, naming the problem.
   */
  async loadSnapshots(filePath?: string): Promise<void> {
    this.#touched = true;
    await this.#recorder.loadSnapshots(filePath);
    this.#loadError = undefined;
  }

  /** What is held for the request `requestOpts` describes (origin, path, method, headers, body), or null. */
  getSnapshotInfo(requestOpts: SnapshotRecorder.RequestOptions): SnapshotRecorder.SnapshotInfo | null {
    return this.#recorder.getSnapshotInfo(requestOpts);
  }

  /** Forgets the recordings of one request; false when none were held. */
  deleteSnapshot(requestOpts: SnapshotRecorder.RequestOptions): boolean {
    return this.#recorder.deleteSnapshot(requestOpts);
  }

  /** Playback starts over: each request gets its first recorded response again. */
  resetCallCounts(): void {
    this.#recorder.resetCallCounts();
  }

  /** Forgets every snapshot held (the file is untouched until the next save). */
  clearSnapshots(): void {
    this.#recorder.clear();
    this.#touched = true;
    this.#loadError = undefined;
  }

  /** Holds exactly `snapshotData` (undici's or the file's entries); hashes are derived again. */
  replaceSnapshots(snapshotData: readonly (SnapshotRecorder.SnapshotData | SnapshotEntry)[]): void {
    this.#recorder.replaceSnapshots(snapshotData);
    this.#touched = true;
    this.#loadError = undefined;
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
    this.#recorder.destroy();
    this.#closing = true;
    const done = (async () => {
      await Promise.allSettled([...this.#preparing]);
      await super.close();
      await this.#replaysSettled();
      await this.#recorder.close();
    })();
    if (callback === undefined) return done;
    done.then(
      () => callback(null, null),
      (err: Error) => callback(err, null),
    );
  }

  /** Aborts everything in flight; nothing is saved. */
  protected override onDestroy(err: Error | null): Promise<void> {
    this.#recorder.destroy();
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
    if (isExcludedUrl(this.#core.settings, url)) return super.dispatch(opts, handler);
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
    const { mode, shouldPlayback, shouldRecord } = this.#core.settings;
    const info: SnapshotAgent.RequestInfo = { ...opts, origin };
    const mayPlay = mode !== 'record' && shouldPlayback?.(info) !== false;
    const mayRecord = mode !== 'playback' && shouldRecord?.(info) !== false;
    // In playback mode a request shouldPlayback refuses is a miss, as undici: never the network.
    if (!mayPlay && !mayRecord && mode !== 'playback') return super.dispatch(opts, handler);
    const { store } = this.#core;
    const request = storedRequest(opts, url, body, this.#core.settings.headers);
    const identity = store.identify(request);
    if (mayPlay) {
      const record = store.next(identity.hash);
      if (record !== undefined) {
        this.#history(opts);
        this.#replay(record, handler);
        return true;
      }
    }
    if (mode === 'playback') throw new MockNotMatchedError(this.#missMessage(request, identity.key));
    if (!mayRecord) return super.dispatch(opts, handler);
    this.#history(opts);
    const tee = new RecordingHandler(handler, (response) => this.#core.keep(request, identity, response));
    return this[kMockAgentPolicy].real.dispatch(opts.origin == null ? { ...opts, origin } : opts, tee);
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
    const { settings, store } = this.#core;
    const headline = `No snapshot found for ${request.method} ${request.url} (mode: ${settings.mode})`;
    const missing = store.missingFile;
    if (missing !== undefined && store.size() === 0) {
      return `${headline}\nThe snapshot file ${missing} does not exist; record it first (mode 'record').`;
    }
    return `${headline}\n${explainSnapshotMiss(key, store.candidates())}`;
  }

  /** Call history, when enabled, lists snapshot traffic as it lists mocked requests. */
  #history(opts: DispatchOptions): void {
    this[kMockAgentPolicy].record(opts);
  }

  /** The automatic load of snapshotPath (playback and update) while it is under way; undefined after. */
  #loading(): Promise<void> | undefined {
    const { mode, snapshotPath } = this.#core.settings;
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

  #replaysSettled(): Promise<void> {
    if (this.#replays.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#replaysDone.push(resolve));
  }
}

export declare namespace SnapshotAgent {
  type Mode = SnapshotRecorder.SnapshotRecorderMode;
  /** What shouldRecord and shouldPlayback see: the dispatch options, the origin as a string. */
  type RequestInfo = SnapshotRecorder.RequestInfo;
  /** MockAgent's options and the recorder's (mode, snapshotPath, the matching options, …). */
  interface Options extends MockAgent.Options, SnapshotRecorder.Options {}
}
