// MemoryCacheStore on its own: the store contract every store passes (fixtures/cache-store-contract.ts),
// then what is its own: size and count limits and LRU eviction.
import { describe, expect, it } from 'vitest';
import { finished } from 'node:stream/promises';
import { cacheStores, errors } from '../ts/index.js';
import type { CacheKey, CacheValue } from '../ts/index.js';
import { cacheStoreContract } from './fixtures/cache-store-contract.js';

const { MemoryCacheStore } = cacheStores;

cacheStoreContract('MemoryCacheStore', (opts) => new MemoryCacheStore(opts));

const key = (path: string, headers: Record<string, string> = {}): CacheKey => ({
  origin: 'http://127.0.0.1:1',
  method: 'GET',
  path,
  headers,
});

function value(extra: Partial<CacheValue> = {}): CacheValue {
  const now = Date.now();
  return { statusCode: 200, statusMessage: 'OK', headers: {}, cachedAt: now, staleAt: now + 60_000, deleteAt: now + 120_000, ...extra };
}

async function put(store: InstanceType<typeof MemoryCacheStore>, k: CacheKey, body: string, v = value()): Promise<void> {
  const w = store.createWriteStream(k, v)!;
  w.end(body);
  await finished(w).catch(() => {});
}

const bodyOf = (store: InstanceType<typeof MemoryCacheStore>, k: CacheKey): string | undefined => {
  const got = store.get(k);
  return got === undefined ? undefined : Buffer.concat(got.body as Buffer[]).toString();
};

describe('MemoryCacheStore', () => {
  it('stores, returns and deletes a response', async () => {
    const store = new MemoryCacheStore();
    await put(store, key('/a'), 'hello', value({ etag: '"1"' }));
    const got = store.get(key('/a'));
    expect(got).toMatchObject({ statusCode: 200, statusMessage: 'OK', etag: '"1"' });
    expect(bodyOf(store, key('/a'))).toBe('hello');
    expect(store.size).toBe(5);
    store.delete(key('/a'));
    expect(store.get(key('/a'))).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('selects by the vary map, null matching an absent header', async () => {
    const store = new MemoryCacheStore();
    await put(store, key('/v', { accept: 'a' }), 'for a', value({ vary: { accept: 'a' } }));
    await put(store, key('/v'), 'for none', value({ vary: { accept: null } }));
    expect(bodyOf(store, key('/v', { accept: 'a' }))).toBe('for a');
    expect(bodyOf(store, key('/v'))).toBe('for none');
    expect(store.get(key('/v', { accept: 'b' }))).toBeUndefined();
  });

  it('never returns an entry past its deleteAt, and replaces an entry with the same key', async () => {
    const store = new MemoryCacheStore();
    await put(store, key('/old'), 'x', value({ deleteAt: Date.now() - 1 }));
    expect(store.get(key('/old'))).toBeUndefined();
    await put(store, key('/r'), 'one');
    await put(store, key('/r'), 'two');
    expect(bodyOf(store, key('/r'))).toBe('two');
    expect(store.count).toBe(2);
  });

  it('skips a response larger than maxEntrySize whole', async () => {
    const store = new MemoryCacheStore({ maxEntrySize: 10 });
    await put(store, key('/big'), 'x'.repeat(11));
    await put(store, key('/small'), 'x'.repeat(10));
    expect(store.get(key('/big'))).toBeUndefined();
    expect(bodyOf(store, key('/small'))).toBe('x'.repeat(10));
  });

  it('evicts the least recently used entries past maxCount, and says so once', async () => {
    const store = new MemoryCacheStore({ maxCount: 2 });
    const events: unknown[] = [];
    store.on('maxSizeExceeded', (e) => events.push(e));
    await put(store, key('/1'), 'a');
    await put(store, key('/2'), 'b');
    store.get(key('/1'));
    await put(store, key('/3'), 'c');
    expect(store.get(key('/2'))).toBeUndefined();
    expect(bodyOf(store, key('/1'))).toBe('a');
    expect(bodyOf(store, key('/3'))).toBe('c');
    expect(events).toEqual([{ size: 3, maxSize: 100 * 1024 * 1024, count: 3, maxCount: 2 }]);
  });

  it('evicts past maxSize in bytes', async () => {
    const store = new MemoryCacheStore({ maxSize: 10 });
    await put(store, key('/1'), '12345');
    await put(store, key('/2'), '12345');
    await put(store, key('/3'), '123');
    expect(store.get(key('/1'))).toBeUndefined();
    expect(store.size).toBe(8);
  });

  it('rejects negative, fractional and non-numeric limits with InvalidArgumentError', () => {
    for (const bad of [{ maxSize: -1 }, { maxCount: 1.5 }, { maxEntrySize: '10' }, { maxCount: NaN }]) {
      expect(() => new MemoryCacheStore(bad as never)).toThrow(errors.InvalidArgumentError);
    }
    expect(() => new MemoryCacheStore(null as never)).toThrow(errors.InvalidArgumentError);
    const store = new MemoryCacheStore();
    expect(() => store.get(null as never)).toThrow(errors.InvalidArgumentError);
    expect(() => store.delete('x' as never)).toThrow(errors.InvalidArgumentError);
    expect(() => store.createWriteStream(key('/'), { statusCode: 200 } as never)).toThrow(errors.InvalidArgumentError);
  });
});
