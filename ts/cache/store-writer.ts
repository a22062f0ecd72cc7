// Writing into a cache store without ever failing a request: a store that throws, rejects or
// errors costs a warning and a cache miss.
import type { Writable } from 'node:stream';
import type { CacheKey, CacheStore, CacheValue, GetResult } from './cache-store.js';
import type { CacheType } from './policy.js';

export interface CacheContext {
  store: CacheStore;
  type: CacheType;
  cacheByDefault: number | undefined;
}

const warned = new WeakMap<object, Set<string>>();

/** One warning per store and message, so a broken store does not flood the output. */
export function warnStore(store: object, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  let seen = warned.get(store);
  if (seen === undefined) warned.set(store, (seen = new Set()));
  if (seen.has(message)) return;
  seen.add(message);
  process.emitWarning(`cache store failed, continuing without it: ${message}`, { type: 'CacheStoreWarning' });
}

/** A stream into the store for `value`, or null when the store declines or fails. */
export function openWriter(store: CacheStore, key: CacheKey, value: CacheValue): Writable | null {
  let writer: Writable | undefined;
  try {
    writer = store.createWriteStream(key, value);
  } catch (err) {
    warnStore(store, err);
    return null;
  }
  if (writer == null) return null;
  // An entry too large for the store fails its stream on purpose; that is not worth a warning.
  writer.on('error', (err: Error) => {
    if (!(err instanceof RangeError)) warnStore(store, err);
  });
  return writer;
}

/** Stores a complete response (a 304-refreshed one, say) in one go. */
export function writeWhole(store: CacheStore, key: CacheKey, value: CacheValue, body: Buffer): void {
  const writer = openWriter(store, key, value);
  if (writer === null) return;
  if (body.length > 0) writer.write(body);
  writer.end();
}

/** store.get without throwing: undefined (a miss) when the store fails. */
export function safeGet(store: CacheStore, key: CacheKey): GetResult | undefined | Promise<GetResult | undefined> {
  try {
    const result = store.get(key);
    if (result !== null && typeof (result as Promise<unknown> | undefined)?.then === 'function') {
      return Promise.resolve(result as PromiseLike<GetResult | undefined>).then(
        (r) => r ?? undefined,
        (err: unknown) => {
          warnStore(store, err);
          return undefined;
        },
      );
    }
    return result ?? undefined;
  } catch (err) {
    warnStore(store, err);
    return undefined;
  }
}

/** store.delete without throwing or leaving a rejected promise behind. */
export function safeDelete(store: CacheStore, key: CacheKey): void {
  try {
    const done = store.delete(key);
    if (done !== undefined && typeof (done as Promise<void>).then === 'function') {
      (done as Promise<void>).then(undefined, (err: unknown) => warnStore(store, err));
    }
  } catch (err) {
    warnStore(store, err);
  }
}
