// SnapshotRecorder: the snapshots a SnapshotAgent holds, usable on its own as undici declares it.
// It owns the matching options, the in-memory snapshots, the snapshot file (loaded and saved
// whole, atomically) and the automatic flush; the agent routes requests through it.
import { InvalidArgumentError } from '../core/errors.js';
import type { DispatchOptions, IncomingHeaders } from '../core/types.js';
import { headersAsObject, normalizeOrigin } from '../mock/mock-request.js';
import { readSnapshotFile, writeSnapshotFile } from './snapshot-file.js';
import { checkEntries, type SnapshotEntry, type SnapshotHeaders, type SnapshotRecord, type SnapshotRequest, type SnapshotResponse } from './snapshot-format.js';
import { storedHeaders } from './snapshot-headers.js';
import { snapshotKey } from './snapshot-key.js';
import { requestBodyBytes, requestUrl, storedRequest } from './snapshot-request.js';
import { isExcludedUrl, kind, snapshotSettings, type SnapshotSettings } from './snapshot-settings.js';
import type { RecorderMode, RecorderRequestInfo, SnapshotRecorderOptions } from './snapshot-options.js';
import { SnapshotStore, type Identity, type StoredSnapshot, type StoredSnapshotInfo } from './snapshot-store.js';

/** What a SnapshotAgent reaches inside its recorder; not part of the public class. */
export interface RecorderCore {
  readonly settings: SnapshotSettings;
  readonly store: SnapshotStore;
  /** Stores a response to `request` and marks the snapshots as changed. */
  keep(request: SnapshotRequest, identity: Identity, response: SnapshotRecorder.RecordedResponse): void;
}

let coreOf: (recorder: SnapshotRecorder) => RecorderCore;

/** The recorder's internals, for the SnapshotAgent that owns it. */
export function recorderCore(recorder: SnapshotRecorder): RecorderCore {
  return coreOf(recorder);
}

function headersOf(value: unknown, where: string): SnapshotHeaders {
  if (value == null) return {};
  if (typeof value !== 'object') throw new InvalidArgumentError(`${where} must be an object or a flat array of names and values`);
  return headersAsObject(value) ?? {};
}

/** A response as stored: headers under the header policy, the body in base64. */
function storedResponse(response: SnapshotRecorder.RecordedResponse, settings: SnapshotSettings): SnapshotResponse {
  if (response === null || typeof response !== 'object') {
    throw new InvalidArgumentError(`response must be an object, got ${kind(response)}`);
  }
  const { statusCode, body } = response;
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 999) {
    throw new InvalidArgumentError('response.statusCode must be an integer from 100 to 999');
  }
  let bytes: Buffer;
  if (body == null) bytes = Buffer.alloc(0);
  else if (typeof body === 'string') bytes = Buffer.from(body);
  else if (body instanceof Uint8Array) bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  else throw new InvalidArgumentError(`response.body must be a string, Buffer or Uint8Array, got ${kind(body)}`);
  return {
    statusCode,
    headers: storedHeaders(headersOf(response.headers, 'response.headers'), settings.headers),
    body: bytes.toString('base64'),
    trailers: storedHeaders(headersOf(response.trailers, 'response.trailers'), settings.headers),
  };
}

export class SnapshotRecorder {
  readonly #settings: SnapshotSettings;
  readonly #store: SnapshotStore;
  #timer: NodeJS.Timeout | undefined;
  /** Something was recorded, deleted or replaced since the snapshot file was last written or read. */
  #dirty = false;
  #saving: Promise<unknown> = Promise.resolve();

  static {
    coreOf = (recorder) => ({
      settings: recorder.#settings,
      store: recorder.#store,
      keep: (request, identity, response) => recorder.#keep(request, identity, storedResponse(response, recorder.#settings)),
    });
  }

  constructor(options?: SnapshotRecorder.Options) {
    if (options != null && typeof options !== 'object') {
      throw new InvalidArgumentError(`SnapshotRecorder options must be an object, got ${kind(options)}`);
    }
    const settings = snapshotSettings(options ?? {});
    this.#settings = settings;
    this.#store = new SnapshotStore(settings.maxSnapshots, (request) => snapshotKey(request, settings.match));
    // Playback never writes, so it needs no flushing.
    if (settings.autoFlush && settings.mode !== 'playback') {
      this.#timer = setInterval(() => this.#flush(), settings.flushInterval);
      // Tests and scripts end when their work does, not when the next flush is due.
      this.#timer.unref();
    }
  }

  /**
   * Records `response` as the next answer to the request `requestOpts` describes (origin, path,
   * method, headers, body), unless excludeUrls or shouldRecord keep it out.
   */
  async record(requestOpts: SnapshotRecorder.RequestOptions, response: SnapshotRecorder.RecordedResponse): Promise<void> {
    const { info, url } = this.#describe(requestOpts);
    const stored = storedResponse(response, this.#settings);
    if (isExcludedUrl(this.#settings, url) || this.#settings.shouldRecord?.(info) === false) return;
    const request = storedRequest(info, url, await requestBodyBytes(info.body), this.#settings.headers);
    this.#keep(request, this.#store.identify(request), stored);
  }

  /**
   * The snapshot for the request `requestOpts` describes, with `response` the one playback gives
   * next (the call count moves on); undefined when there is none, or excludeUrls or
   * shouldPlayback keep the request out.
   */
  findSnapshot(requestOpts: SnapshotRecorder.RequestOptions): SnapshotRecorder.Snapshot | undefined {
    const { info, url } = this.#describe(requestOpts);
    if (isExcludedUrl(this.#settings, url) || this.#settings.shouldPlayback?.(info) === false) return undefined;
    const hash = this.#hashOf(info, url);
    const record = this.#store.next(hash);
    if (record === undefined) return undefined;
    return { ...this.#store.get(hash)!, response: structuredClone(record.response) };
  }

  /**
   * Replaces the snapshots held with those in `filePath` (default: options.snapshotPath). A missing
   * file holds none; an unreadable or malformed one rejects, naming the problem.
   */
  async loadSnapshots(filePath?: string): Promise<void> {
    const path = this.#pathFor(filePath);
    const entries = await readSnapshotFile(path);
    this.#store.replace((entries ?? []).map((e) => e.snapshot));
    this.#store.missingFile = entries === null ? path : undefined;
    this.#dirty = false;
  }

  /** Writes every snapshot held to `filePath` (default: options.snapshotPath), atomically. */
  async saveSnapshots(filePath?: string): Promise<void> {
    const path = this.#pathFor(filePath);
    const entries = this.#store.entries();
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

  /** Forgets every snapshot held (the file is untouched until the next save). */
  clear(): void {
    this.#store.clear();
    this.#store.missingFile = undefined;
    this.#dirty = true;
  }

  /** Copies of the snapshots, one per request, oldest first. */
  getSnapshots(): SnapshotRecorder.Snapshot[] {
    return this.#store.snapshots();
  }

  /** Copies of every recorded response as snapshot file entries (one per response). */
  getEntries(): SnapshotEntry[] {
    return this.#store.entries();
  }

  /** Number of snapshots (distinct requests) held. */
  size(): number {
    return this.#store.size();
  }

  /** Playback starts over: each request gets its first recorded response again. */
  resetCallCounts(): void {
    this.#store.resetCallCounts();
  }

  /** Forgets the snapshot of one request; false when none was held. */
  deleteSnapshot(requestOpts: SnapshotRecorder.RequestOptions): boolean {
    const { info, url } = this.#describe(requestOpts);
    const deleted = this.#store.delete(this.#hashOf(info, url));
    if (deleted) this.#dirty = true;
    return deleted;
  }

  /** What is held for the request `requestOpts` describes, without the responses; null when nothing. */
  getSnapshotInfo(requestOpts: SnapshotRecorder.RequestOptions): SnapshotRecorder.SnapshotInfo | null {
    const { info, url } = this.#describe(requestOpts);
    return this.#store.info(this.#hashOf(info, url));
  }

  /**
   * Holds exactly `snapshotData`: undici's `{ hash, snapshot: { request, responses, … } }` or the
   * file's `{ hash, snapshot: { request, response, timestamp } }` entries, checked field by field.
   * Hashes are derived again under this recorder's matching options; playback starts at each
   * request's first response.
   */
  replaceSnapshots(snapshotData: readonly (SnapshotRecorder.SnapshotData | SnapshotEntry)[]): void {
    const checked = checkEntries(snapshotData, 'replaceSnapshots(entries)');
    this.#store.replace(checked.map((e) => e.snapshot));
    this.#store.missingFile = undefined;
    this.#dirty = true;
  }

  /** Stops the automatic flush; nothing is written. */
  destroy(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Stops the automatic flush, waits for saves under way, then writes snapshotPath if anything
   * changed (not in playback mode). A failed automatic flush is retried here and reported.
   */
  async close(): Promise<void> {
    this.destroy();
    await this.#saving;
    const { mode, snapshotPath } = this.#settings;
    if (mode !== 'playback' && snapshotPath !== undefined && this.#dirty) await this.saveSnapshots();
  }

  #keep(request: SnapshotRequest, identity: Identity, response: SnapshotResponse): void {
    const record: SnapshotRecord = { request, response, timestamp: new Date().toISOString() };
    this.#store.record(record, identity);
    this.#dirty = true;
  }

  /** The request as the hooks see it (origin a string, method GET by default) and its full URL. */
  #describe(requestOpts: SnapshotRecorder.RequestOptions): { info: SnapshotRecorder.RequestInfo; url: string } {
    if (requestOpts === null || typeof requestOpts !== 'object' || requestOpts.origin == null) {
      throw new InvalidArgumentError('requestOpts must be an object with an origin');
    }
    const origin = normalizeOrigin(requestOpts.origin);
    const info = { path: '/', ...requestOpts, method: requestOpts.method ?? 'GET', origin } as SnapshotRecorder.RequestInfo;
    return { info, url: requestUrl(info, origin) };
  }

  #hashOf(info: SnapshotRecorder.RequestInfo, url: string): string {
    const body = requestBodyBytes(info.body);
    // A streamed body cannot be read here; such requests are identified without one.
    const bytes = body instanceof Promise ? undefined : body;
    return this.#store.identify(storedRequest(info, url, bytes, this.#settings.headers)).hash;
  }

  #pathFor(filePath: string | undefined): string {
    const path = filePath ?? this.#settings.snapshotPath;
    // undici's words; which call it was is in the stack.
    if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('Snapshot path is required');
    return path;
  }

  #flush(): void {
    if (!this.#dirty || this.#settings.snapshotPath === undefined) return;
    // Nobody awaits a timer: a failed save leaves the snapshots dirty, and close() retries and reports it.
    this.saveSnapshots().catch(() => {});
  }
}

export declare namespace SnapshotRecorder {
  type SnapshotRecorderMode = RecorderMode;
  type RequestInfo = RecorderRequestInfo;
  /** A request to look up or record: dispatch options with an origin (method GET and path '/' by default). */
  type RequestOptions = Partial<DispatchOptions>;
  /** A response to record; the body is stored in base64. */
  interface RecordedResponse {
    statusCode?: number;
    headers?: IncomingHeaders | readonly (string | Buffer)[] | null;
    body?: string | Uint8Array | null;
    trailers?: IncomingHeaders | readonly (string | Buffer)[] | null;
  }
  /**
   * One request and its recorded responses. Header values are arrays when a header was repeated
   * (undici types them as strings); a request body that is not UTF-8 is held in base64 with
   * `bodyEncoding: 'base64'`.
   */
  interface Snapshot extends StoredSnapshot {
    /** Set by findSnapshot only (as undici's): the response playback gives for this call. */
    response?: SnapshotResponse;
  }
  type SnapshotInfo = StoredSnapshotInfo;
  interface SnapshotData {
    hash: string;
    snapshot: Snapshot;
  }
  type Options = SnapshotRecorderOptions;

}
