// caches / CacheStorage / Cache (ts/fetch/cache-storage.ts, web-cache.ts): the WHATWG Cache API in
// memory, with add / addAll fetching from a real server. Cases follow undici's test/cache.
import { afterEach, describe, expect, it } from 'vitest';
import { caches, Request, Response } from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
afterEach(async () => {
  for (const name of await caches.keys()) await caches.delete(name);
});

describe('CacheStorage', () => {
  it('opens, lists, finds and deletes named caches', async () => {
    expect(await caches.has('a')).toBe(false);
    const a = await caches.open('a');
    expect(await caches.open('a')).toBe(a);
    await caches.open('b');
    expect(await caches.keys()).toEqual(['a', 'b']);
    await (await caches.open('b')).put('http://x.test/p', new Response('from b'));
    expect(await (await caches.match('http://x.test/p'))?.text()).toBe('from b');
    expect(await caches.match('http://x.test/p', { cacheName: 'a' })).toBe(undefined);
    expect(await caches.delete('a')).toBe(true);
    expect(await caches.delete('a')).toBe(false);
    expect(await caches.keys()).toEqual(['b']);
  });

  it('cannot be constructed', async () => {
    const Ctor = caches.constructor as new () => unknown;
    expect(() => new Ctor()).toThrow(new TypeError('Illegal constructor'));
    const Cache = (await caches.open('x')).constructor as new () => unknown;
    expect(() => new Cache()).toThrow(new TypeError('Illegal constructor'));
  });
});

describe('Cache', () => {
  it('put / match / matchAll / keys / delete, each match readable on its own', async () => {
    const cache = await caches.open('c');
    const res = new Response('hello', { status: 200, headers: { 'x-a': '1' } });
    await cache.put('http://x.test/a?q=1', res);
    expect(res.bodyUsed).toBe(true);
    const first = await cache.match('http://x.test/a?q=1#frag');
    const second = await cache.match(new Request('http://x.test/a?q=1'));
    expect([await first?.text(), await second?.text(), first?.headers.get('x-a')]).toEqual(['hello', 'hello', '1']);
    expect(await cache.match('http://x.test/a')).toBe(undefined);
    expect(await (await cache.match('http://x.test/a', { ignoreSearch: true }))?.text()).toBe('hello');
    expect(await cache.match(new Request('http://x.test/a?q=1', { method: 'POST' }))).toBe(undefined);
    expect(await (await cache.match(new Request('http://x.test/a?q=1', { method: 'POST' }), { ignoreMethod: true }))?.text()).toBe('hello');

    await cache.put('http://x.test/b', new Response('b'));
    // A second put for the same request replaces the first.
    await cache.put('http://x.test/b', new Response('b2'));
    expect((await cache.keys()).map((r) => r.url)).toEqual(['http://x.test/a?q=1', 'http://x.test/b']);
    expect(await Promise.all((await cache.matchAll()).map((r) => r.text()))).toEqual(['hello', 'b2']);
    expect(await cache.delete('http://x.test/b')).toBe(true);
    expect(await cache.delete('http://x.test/b')).toBe(false);
    expect((await cache.keys()).map((r) => r.url)).toEqual(['http://x.test/a?q=1']);
  });

  it('matches on the headers Vary names, unless ignoreVary', async () => {
    const cache = await caches.open('vary');
    await cache.put(new Request('http://x.test/v', { headers: { 'accept-language': 'en' } }), new Response('en', { headers: { vary: 'Accept-Language' } }));
    await cache.put(new Request('http://x.test/v', { headers: { 'accept-language': 'fr' } }), new Response('fr', { headers: { vary: 'Accept-Language' } }));
    const ask = (lang: string): Request => new Request('http://x.test/v', { headers: { 'accept-language': lang } });
    expect(await (await cache.match(ask('fr')))?.text()).toBe('fr');
    expect(await cache.match(ask('de'))).toBe(undefined);
    expect(await (await cache.match(ask('de'), { ignoreVary: true }))?.text()).toBe('en');
    expect(await cache.keys()).toHaveLength(2);
  });

  it('refuses what cannot be cached with TypeError', async () => {
    const cache = await caches.open('bad');
    await expect(cache.put(new Request('http://x.test/', { method: 'POST' }), new Response('x'))).rejects.toThrow(TypeError);
    await expect(cache.put('data:text/plain,x', new Response('x'))).rejects.toThrow(TypeError);
    await expect(cache.put('http://x.test/', new Response('x', { status: 206 }))).rejects.toThrow(new TypeError('Cache.put: Got 206 status'));
    await expect(cache.put('http://x.test/', new Response('x', { headers: { vary: 'a, *' } }))).rejects.toThrow(new TypeError('Cache.put: Got * vary field value'));
    const used = new Response('x');
    await used.text();
    await expect(cache.put('http://x.test/', used)).rejects.toThrow(new TypeError('Cache.put: Response body is locked or disturbed'));
    await expect(cache.put('http://x.test/', 'x' as unknown as Response)).rejects.toThrow(TypeError);
    expect(await cache.keys()).toEqual([]);
  });

  it('add / addAll fetch and store, all or nothing', async () => {
    let hits = 0;
    const srv = cleanup.track(
      await servers.httpServer((req, res) => {
        hits++;
        if (req.url === '/missing') res.statusCode = 404;
        if (req.url === '/any') res.setHeader('vary', '*');
        res.end(`body of ${req.url}`);
      }),
    );
    const cache = await caches.open('net');
    await cache.add(`${srv.origin}/one`);
    await cache.addAll([`${srv.origin}/two`, new Request(`${srv.origin}/three`)]);
    expect(await (await cache.match(`${srv.origin}/two`))?.text()).toBe('body of /two');
    expect((await cache.keys()).map((r) => new URL(r.url).pathname)).toEqual(['/one', '/two', '/three']);

    await expect(cache.addAll([`${srv.origin}/four`, `${srv.origin}/missing`])).rejects.toThrow(TypeError);
    await expect(cache.add(`${srv.origin}/any`)).rejects.toThrow(new TypeError('Cache.addAll: invalid vary field value'));
    await expect(cache.add(new Request(`${srv.origin}/post`, { method: 'POST' }))).rejects.toThrow(TypeError);
    expect(await cache.match(`${srv.origin}/four`)).toBe(undefined);
    expect(await cache.keys()).toHaveLength(3);
    expect(hits).toBeGreaterThanOrEqual(5);
  });
});
