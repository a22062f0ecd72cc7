// SqliteCacheStore: persistence across instances and processes, limits, and degrading to cache
// misses (with a warning) when the database is corrupt or locked. Needs node:sqlite (Node >=
// 22.5); on runtimes without it only the construction error is checked.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Agent, cacheStores, errors, interceptors } from '../ts/index.js';
import type { CacheKey, CacheValue } from '../ts/index.js';
import { countingOrigin, type Route } from './fixtures/counting-origin.js';
import { useCleanup } from './fixtures/cleanup.js';
import { cacheStoreContract } from './fixtures/cache-store-contract.js';

const { SqliteCacheStore } = cacheStores;
type Store = InstanceType<typeof SqliteCacheStore>;
const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
const hasSqlite = getBuiltin?.call(process, 'node:sqlite') !== undefined;
const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

const { track, push } = useCleanup();

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferro-sqlite-'));
  push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const key = (path: string, headers: Record<string, string> = {}): CacheKey => ({ origin: 'http://127.0.0.1:1', method: 'GET', path, headers });
function value(extra: Partial<CacheValue> = {}): CacheValue {
  const now = Date.now();
  return { statusCode: 200, statusMessage: 'OK', headers: { 'x-a': '1' }, cachedAt: now, staleAt: now + 60_000, deleteAt: now + 120_000, ...extra };
}
async function put(store: Store, k: CacheKey, body: string, v = value()): Promise<void> {
  const w = store.createWriteStream(k, v)!;
  w.end(body);
  await finished(w).catch(() => {});
}
const bodyOf = (store: Store, k: CacheKey): string | undefined => store.get(k)?.body?.toString();

const cacheable: Route = (_req, res, hit) => {
  res.writeHead(200, { 'cache-control': 'max-age=600' });
  res.end(`response ${hit}`);
};

describe.runIf(!hasSqlite)('SqliteCacheStore without node:sqlite', () => {
  it('throws NotSupportedError at construction', () => {
    expect(() => new SqliteCacheStore()).toThrow(errors.NotSupportedError);
    expect(() => new SqliteCacheStore()).toThrow(/node:sqlite/);
  });
});

describe.skipIf(!hasSqlite)('SqliteCacheStore', () => {
  cacheStoreContract('SqliteCacheStore', (opts) => new SqliteCacheStore(opts));

  it('stores, selects by vary, replaces and deletes', async () => {
    const store = new SqliteCacheStore();
    await put(store, key('/v', { accept: 'a' }), 'for a', value({ vary: { accept: 'a' }, etag: '"e"' }));
    await put(store, key('/v'), 'for none', value({ vary: { accept: null } }));
    expect(bodyOf(store, key('/v', { accept: 'a' }))).toBe('for a');
    expect(store.get(key('/v', { accept: 'a' }))).toMatchObject({ etag: '"e"', headers: { 'x-a': '1' }, vary: { accept: 'a' } });
    expect(bodyOf(store, key('/v'))).toBe('for none');
    expect(store.get(key('/v', { accept: 'b' }))).toBeUndefined();
    await put(store, key('/v'), 'replaced', value({ vary: { accept: null } }));
    expect(bodyOf(store, key('/v'))).toBe('replaced');
    expect(store.size).toBe(2);
    store.delete(key('/v'));
    expect(store.size).toBe(0);
    store.close();
  });

  it('keeps responses in a file that outlives the store instance', async () => {
    const location = join(tempDir(), 'cache.db');
    const first = new SqliteCacheStore({ location });
    await put(first, key('/p'), 'persisted');
    first.close();
    const second = new SqliteCacheStore({ location });
    expect(bodyOf(second, key('/p'))).toBe('persisted');
    second.close();
  });

  it('evicts the least recently used past maxCount and skips bodies over maxEntrySize', async () => {
    const store = new SqliteCacheStore({ maxCount: 2, maxEntrySize: 8 });
    await put(store, key('/1'), 'one');
    await put(store, key('/2'), 'two');
    store.get(key('/1'));
    await put(store, key('/3'), 'three');
    expect(store.get(key('/2'))).toBeUndefined();
    expect(bodyOf(store, key('/1'))).toBe('one');
    await put(store, key('/big'), 'x'.repeat(9));
    expect(store.get(key('/big'))).toBeUndefined();
    store.close();
  });

  it('rejects bad limits with InvalidArgumentError', () => {
    for (const bad of [{ maxCount: -1 }, { maxEntrySize: 3_000_000_000 }, { maxEntrySize: 1.5 }, { location: 7 }]) {
      expect(() => new SqliteCacheStore(bad as never)).toThrow(errors.InvalidArgumentError);
    }
  });

  it('a corrupt database file means cache misses and a warning, never a failed request', async () => {
    const location = join(tempDir(), 'corrupt.db');
    writeFileSync(location, 'this is not a sqlite database, just some bytes that fill a page '.repeat(100));
    const warning = once(process, 'warning');
    const store = new SqliteCacheStore({ location });
    const [w] = (await warning) as [Error];
    expect(w.name).toBe('CacheStoreWarning');
    const origin = track(await countingOrigin(cacheable));
    const agent = track(new Agent().compose(interceptors.cache({ store })));
    for (let i = 1; i <= 2; i++) {
      const res = await agent.request({ origin: origin.origin, path: '/', method: 'GET' });
      expect(await res.body.text()).toBe(`response ${i}`);
    }
  });

  it('a database locked by another writer means misses, not errors', async () => {
    const location = join(tempDir(), 'locked.db');
    const store = new SqliteCacheStore({ location });
    const { DatabaseSync } = getBuiltin!.call(process, 'node:sqlite') as {
      DatabaseSync: new (l: string) => { exec(sql: string): void; close(): void };
    };
    const locker = new DatabaseSync(location);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      const origin = track(await countingOrigin(cacheable));
      const agent = track(new Agent().compose(interceptors.cache({ store })));
      for (let i = 1; i <= 2; i++) {
        const res = await agent.request({ origin: origin.origin, path: '/', method: 'GET' });
        expect(await res.body.text()).toBe(`response ${i}`);
      }
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
      store.close();
    }
  });

  describe('across processes', () => {
    const distIndex = join(root, 'dist', 'index.js');
    beforeAll(async () => {
      // The children run the compiled package; build it when it is missing or older than ts/.
      const newest = (dir: string): number =>
        Math.max(...readdirSync(dir, { withFileTypes: true }).map((e) =>
          e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs));
      if (!existsSync(distIndex) || statSync(distIndex).mtimeMs < newest(join(root, 'ts'))) {
        await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: root });
      }
    }, 120_000);

    it('a response stored by one process is served to another from the same file', async () => {
      const origin = track(await countingOrigin(cacheable));
      const location = join(tempDir(), 'shared.db');
      const child = join(root, '__test__', 'fixtures', 'sqlite-cache-child.mjs');
      const args = [child, pathToFileURL(distIndex).href, location, `${origin.origin}/shared`];
      const a = await run(process.execPath, args);
      const b = await run(process.execPath, args);
      expect(a.stdout).toBe('response 1');
      expect(b.stdout).toBe('response 1');
      expect(origin.hits).toBe(1);
    });
  });
});
