// CookieJar: RFC 6265bis storage and retrieval rules, limits and eviction, persistence (toJSON /
// fromJSON, SqliteCookieStore). Pure jar behaviour, no network; the interceptor's suite talks to
// real servers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CookieJar, MemoryCookieStore, SqliteCookieStore, errors } from '../ts/index.js';

const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
const hasSqlite = getBuiltin?.call(process, 'node:sqlite') !== undefined;

const names = (jar: CookieJar, url: string) => jar.getCookies(url).map((c) => `${c.name}=${c.value}`);

afterEach(() => {
  vi.useRealTimers();
});

describe('CookieJar: domains', () => {
  it('keeps a cookie without Domain for its host only', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1', 'http://www.example.com/')).not.toBeNull();
    expect(names(jar, 'http://www.example.com/')).toEqual(['a=1']);
    expect(names(jar, 'http://sub.www.example.com/')).toEqual([]);
    expect(names(jar, 'http://example.com/')).toEqual([]);
  });

  it('sends a Domain cookie to the domain and its subdomains', () => {
    const jar = new CookieJar();
    jar.setCookie('a=1; Domain=.Example.COM', 'http://www.example.com/');
    expect(names(jar, 'http://example.com/')).toEqual(['a=1']);
    expect(names(jar, 'http://deep.sub.example.com/')).toEqual(['a=1']);
    expect(names(jar, 'http://notexample.com/')).toEqual([]);
    expect(jar.getCookies('http://example.com/')[0]!.domain).toBe('example.com');
  });

  it('ignores a Domain the host is not in', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1; Domain=other.com', 'http://www.example.com/')).toBeNull();
    expect(jar.setCookie('a=1; Domain=www.example.com', 'http://example.com/')).toBeNull();
    expect(jar.toJSON().cookies).toEqual([]);
  });

  it('rejects a public suffix as Domain (ICANN and private sections of the list)', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1; Domain=com', 'http://example.com/')).toBeNull();
    expect(jar.setCookie('a=1; Domain=co.uk', 'http://www.example.co.uk/')).toBeNull();
    expect(jar.setCookie('a=1; Domain=github.io', 'http://someone.github.io/')).toBeNull();
    expect(jar.toJSON().cookies).toEqual([]);
    // The registrable domain below a suffix is fine.
    expect(jar.setCookie('b=2; Domain=example.co.uk', 'http://www.example.co.uk/')).not.toBeNull();
    expect(names(jar, 'http://shop.example.co.uk/')).toEqual(['b=2']);
  });

  it('takes a public suffix Domain from that very host as a host-only cookie', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1; Domain=github.io', 'http://github.io/')).not.toBeNull();
    expect(names(jar, 'http://github.io/')).toEqual(['a=1']);
    expect(names(jar, 'http://someone.github.io/')).toEqual([]);
  });

  it('matches an IP address only exactly', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1; Domain=0.0.1', 'http://127.0.0.1/')).toBeNull();
    expect(jar.setCookie('b=2; Domain=127.0.0.1', 'http://127.0.0.1:8080/')).not.toBeNull();
    expect(jar.setCookie('c=3', 'http://[::1]:9/')).not.toBeNull();
    expect(names(jar, 'http://127.0.0.1:9000/')).toEqual(['b=2']);
    expect(names(jar, 'http://[::1]/')).toEqual(['c=3']);
  });

  it('reads an internationalized host and Domain as punycode', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('a=1; Domain=bücher.example', 'http://www.bücher.example/')).not.toBeNull();
    expect(jar.getCookies('http://xn--bcher-kva.example/')[0]!.domain).toBe('xn--bcher-kva.example');
  });
});

describe('CookieJar: paths', () => {
  it('defaults the path to the request path directory', () => {
    const jar = new CookieJar();
    jar.setCookie('a=1', 'http://example.com/docs/page.html');
    jar.setCookie('b=2; Path=relative', 'http://example.com/api/v1/items?x=1');
    expect(jar.getCookies('http://example.com/docs/other')[0]!.path).toBe('/docs');
    expect(names(jar, 'http://example.com/docs')).toEqual(['a=1']);
    expect(names(jar, 'http://example.com/docsx')).toEqual([]);
    expect(names(jar, 'http://example.com/')).toEqual([]);
    expect(names(jar, 'http://example.com/api/v1/')).toEqual(['b=2']);
  });

  it('orders the cookies by path length, then by creation, and keeps creation on replacement', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const jar = new CookieJar();
    jar.setCookie('first=1; Path=/', 'http://example.com/');
    vi.advanceTimersByTime(10);
    jar.setCookie('deep=1; Path=/a/b', 'http://example.com/');
    vi.advanceTimersByTime(10);
    jar.setCookie('second=1; Path=/', 'http://example.com/');
    vi.advanceTimersByTime(10);
    jar.setCookie('mid=1; Path=/a', 'http://example.com/');
    vi.advanceTimersByTime(10);
    jar.setCookie('first=2; Path=/', 'http://example.com/');
    expect(jar.getCookieString('http://example.com/a/b/c')).toBe('deep=1; mid=1; first=2; second=1');
  });
});

describe('CookieJar: Secure, HttpOnly, SameSite', () => {
  it('takes a Secure cookie only over a secure channel and sends it only there', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('s=1; Secure', 'http://example.com/')).toBeNull();
    expect(jar.setCookie('s=1; Secure', 'https://example.com/')).not.toBeNull();
    expect(names(jar, 'http://example.com/')).toEqual([]);
    expect(names(jar, 'https://example.com/')).toEqual(['s=1']);
    expect(names(jar, 'wss://example.com/')).toEqual(['s=1']);
  });

  it('counts loopback hosts as secure, as browsers do', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('s=1; Secure', 'http://127.0.0.1:3000/')).not.toBeNull();
    expect(jar.setCookie('t=1; Secure', 'http://localhost:3000/')).not.toBeNull();
    expect(names(jar, 'http://127.0.0.1:3001/')).toEqual(['s=1']);
  });

  it('does not let plain http shadow a Secure cookie', () => {
    const jar = new CookieJar();
    jar.setCookie('id=secret; Secure; Domain=example.com', 'https://example.com/');
    expect(jar.setCookie('id=evil', 'http://www.example.com/')).toBeNull();
    expect(jar.setCookie('other=ok', 'http://www.example.com/')).not.toBeNull();
    expect(jar.getCookieString('https://www.example.com/')).toBe('id=secret; other=ok');
  });

  it('stores and sends HttpOnly cookies (this is an HTTP client), reporting the flag', () => {
    const jar = new CookieJar();
    jar.setCookie('h=1; HttpOnly', 'http://example.com/');
    expect(jar.getCookies('http://example.com/')).toEqual([
      { name: 'h', value: '1', domain: 'example.com', path: '/', expires: null, secure: false, httpOnly: true, sameSite: undefined },
    ]);
  });

  it('ignores SameSite=None without Secure', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('n=1; SameSite=None', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('n=1; SameSite=None; Secure', 'https://example.com/')?.sameSite).toBe('None');
  });

  it('sends every SameSite cookie same-site; cross-site withholds Strict, and Lax unless the method is safe', () => {
    const jar = new CookieJar();
    jar.setCookie('strict=1; SameSite=Strict', 'https://example.com/');
    jar.setCookie('lax=1; SameSite=Lax', 'https://example.com/');
    jar.setCookie('plain=1', 'https://example.com/');
    jar.setCookie('none=1; SameSite=None; Secure', 'https://example.com/');
    const url = 'https://example.com/';
    expect(jar.getCookieString(url)).toBe('strict=1; lax=1; plain=1; none=1');
    expect(jar.getCookieString(url, { crossSite: true, method: 'GET' })).toBe('lax=1; plain=1; none=1');
    expect(jar.getCookieString(url, { crossSite: true, method: 'POST' })).toBe('none=1');
  });
});

describe('CookieJar: expiry', () => {
  it('lets Max-Age win over Expires, and deletes with Max-Age=0 or a past Expires', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2030, 0, 1));
    const jar = new CookieJar();
    const c = jar.setCookie('a=1; Expires=Wed, 01 Jan 2031 00:00:00 GMT; Max-Age=60', 'http://example.com/');
    expect(c!.expires!.getTime()).toBe(Date.UTC(2030, 0, 1) + 60_000);
    vi.advanceTimersByTime(61_000);
    expect(names(jar, 'http://example.com/')).toEqual([]);
    jar.setCookie('b=1', 'http://example.com/');
    jar.setCookie('c=1', 'http://example.com/');
    expect(jar.setCookie('b=x; Max-Age=0', 'http://example.com/')).toBeNull();
    expect(jar.setCookie('c=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'http://example.com/')).toBeNull();
    expect(names(jar, 'http://example.com/')).toEqual([]);
    expect(jar.toJSON().cookies).toEqual([]);
  });

  it('caps a lifetime at 400 days', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2030, 0, 1));
    const jar = new CookieJar();
    const c = jar.setCookie('a=1; Max-Age=999999999', 'http://example.com/');
    expect(c!.expires!.getTime()).toBe(Date.UTC(2030, 0, 1) + 400 * 86_400_000);
    const d = jar.setCookie('b=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT', 'http://example.com/');
    expect(d!.expires!.getTime()).toBe(Date.UTC(2030, 0, 1) + 400 * 86_400_000);
  });
});

describe('CookieJar: name prefixes', () => {
  it('__Secure- needs Secure', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('__Secure-a=1', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__secure-a=1', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__Secure-a=1; Secure; Domain=example.com', 'https://www.example.com/')).not.toBeNull();
  });

  it('__Host- needs Secure, no Domain and Path=/', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('__Host-a=1; Secure', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__Host-a=1; Secure; Path=/; Domain=example.com', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__Host-a=1; Path=/', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__HOST-a=1; Secure; Path=/x', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('__Host-a=1; Secure; Path=/', 'https://example.com/x/y')).not.toBeNull();
    expect(names(jar, 'https://example.com/')).toEqual(['__Host-a=1']);
  });

  it('a nameless cookie may not carry a prefix in its value', () => {
    const jar = new CookieJar();
    expect(jar.setCookie('__Host-a', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('=__Secure-a', 'https://example.com/')).toBeNull();
    expect(jar.setCookie('token', 'https://example.com/')).not.toBeNull();
    expect(jar.getCookieString('https://example.com/')).toBe('token');
  });
});

describe('CookieJar: limits', () => {
  it('ignores a cookie whose name and value pass 4096 characters', () => {
    const jar = new CookieJar();
    expect(jar.setCookie(`a=${'x'.repeat(4096)}`, 'http://example.com/')).toBeNull();
    expect(jar.setCookie(`a=${'x'.repeat(4095)}`, 'http://example.com/')).not.toBeNull();
  });

  it('evicts the least recently used cookie of a domain past maxCookiesPerDomain', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const jar = new CookieJar({ maxCookiesPerDomain: 3 });
    for (const n of ['a', 'b', 'c']) {
      jar.setCookie(`${n}=1; Path=/${n}`, 'http://example.com/');
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(1000);
    jar.getCookies('http://example.com/a'); // 'a' is now the most recently used (last access is kept to the second)
    vi.advanceTimersByTime(1);
    jar.setCookie('d=1; Path=/d', 'http://www.example.com/');
    jar.setCookie('other=1', 'http://other.com/');
    expect(jar.toJSON().cookies.map((c) => c.name).sort()).toEqual(['a', 'c', 'd', 'other']);
  });

  it('evicts across domains past maxCookies', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const jar = new CookieJar({ maxCookies: 2 });
    jar.setCookie('a=1', 'http://a.com/');
    vi.advanceTimersByTime(1);
    jar.setCookie('b=1', 'http://b.com/');
    vi.advanceTimersByTime(1);
    jar.setCookie('c=1', 'http://c.com/');
    expect(jar.toJSON().cookies.map((c) => c.domain).sort()).toEqual(['b.com', 'c.com']);
  });
});

describe('CookieJar: API', () => {
  it('deleteCookie removes the named cookies a URL would get', () => {
    const jar = new CookieJar();
    jar.setCookie('a=1; Domain=example.com', 'http://example.com/');
    jar.setCookie('a=2; Path=/deep', 'http://www.example.com/');
    jar.setCookie('b=1', 'http://www.example.com/');
    jar.setCookie('a=3', 'http://other.com/');
    expect(jar.deleteCookie('a', 'http://www.example.com/deep/x')).toBe(2);
    expect(names(jar, 'http://www.example.com/deep/x')).toEqual(['b=1']);
    expect(names(jar, 'http://other.com/')).toEqual(['a=3']);
  });

  it('refuses bad arguments with InvalidArgumentError', () => {
    const jar = new CookieJar();
    expect(() => jar.setCookie(1 as never, 'http://a.com/')).toThrow(errors.InvalidArgumentError);
    expect(() => jar.setCookie('a=1', 'not a url')).toThrow(errors.InvalidArgumentError);
    expect(() => jar.getCookies('ftp://a.com/')).toThrow(errors.InvalidArgumentError);
    expect(() => jar.deleteCookie(undefined as never, 'http://a.com/')).toThrow(errors.InvalidArgumentError);
    expect(() => new CookieJar({ maxCookies: 0 })).toThrow(errors.InvalidArgumentError);
    expect(() => new CookieJar({ store: {} as never })).toThrow(errors.InvalidArgumentError);
    expect(() => new CookieJar(null as never)).toThrow(errors.InvalidArgumentError);
  });

  it('round-trips through toJSON / fromJSON, session cookies and creation order included', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const jar = new CookieJar();
    jar.setCookie('s=session', 'https://example.com/');
    vi.advanceTimersByTime(5);
    jar.setCookie('p=persist; Max-Age=3600; Secure; HttpOnly; SameSite=Lax; Domain=example.com', 'https://example.com/');
    const text = JSON.stringify(jar);
    const copy = CookieJar.fromJSON(text);
    expect(copy.toJSON()).toEqual(jar.toJSON());
    expect(CookieJar.fromJSON(JSON.parse(text)).toJSON()).toEqual(jar.toJSON());
    expect(copy.getCookies('https://www.example.com/')).toEqual(jar.getCookies('https://www.example.com/'));
    expect(copy.getCookieString('https://example.com/')).toBe('s=session; p=persist');
  });

  it('fromJSON refuses malformed input, and values that would add a pair to the cookie header', () => {
    const good = new CookieJar();
    good.setCookie('a=1', 'http://example.com/');
    const json = good.toJSON();
    const bad = (patch: Record<string, unknown>) => ({ ...json, cookies: [{ ...json.cookies[0]!, ...patch }] });
    expect(() => CookieJar.fromJSON('{nope')).toThrow(errors.InvalidArgumentError);
    expect(() => CookieJar.fromJSON({ version: 2, cookies: [] } as never)).toThrow(/version/);
    expect(() => CookieJar.fromJSON(bad({ value: '1; admin=true' }) as never)).toThrow(errors.InvalidArgumentError);
    expect(() => CookieJar.fromJSON(bad({ value: '1\r\nx: y' }) as never)).toThrow(errors.InvalidArgumentError);
    expect(() => CookieJar.fromJSON(bad({ name: 'a=b' }) as never)).toThrow(errors.InvalidArgumentError);
    expect(() => CookieJar.fromJSON(bad({ path: 'x' }) as never)).toThrow(errors.InvalidArgumentError);
    expect(() => CookieJar.fromJSON(bad({ expires: 'soon' }) as never)).toThrow(errors.InvalidArgumentError);
  });

  it('takes any store with the CookieStore methods', () => {
    const store = new MemoryCookieStore();
    const jar = new CookieJar({ store });
    jar.setCookie('a=1', 'http://example.com/');
    expect(store.count()).toBe(1);
    expect(new CookieJar({ store }).getCookieString('http://example.com/')).toBe('a=1');
  });
});

describe.runIf(!hasSqlite)('SqliteCookieStore without node:sqlite (Node < 22.5)', () => {
  it('throws NotSupportedError naming node:sqlite', () => {
    expect(() => new SqliteCookieStore()).toThrow(errors.NotSupportedError);
    expect(() => new SqliteCookieStore()).toThrow(/node:sqlite/);
  });
});

describe.skipIf(!hasSqlite)('SqliteCookieStore (node:sqlite, Node >= 22.5; skipped where the runtime lacks it)', () => {
  it('keeps cookies across jars using the same file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferro-cookies-'));
    try {
      const location = join(dir, 'cookies.db');
      const first = new SqliteCookieStore({ location });
      const jar = new CookieJar({ store: first });
      jar.setCookie('a=1; Max-Age=600; SameSite=Strict', 'https://example.com/');
      jar.setCookie('b=2; Domain=example.com; Path=/x', 'https://www.example.com/');
      first.close();
      const second = new SqliteCookieStore({ location });
      const again = new CookieJar({ store: second });
      expect(again.getCookieString('https://example.com/x/y')).toBe('b=2; a=1');
      expect(again.getCookies('https://example.com/')[0]!.sameSite).toBe('Strict');
      expect(again.deleteCookie('a', 'https://example.com/')).toBe(1);
      expect(second.count()).toBe(1);
      second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies the caps through the store', () => {
    const store = new SqliteCookieStore();
    const jar = new CookieJar({ store, maxCookiesPerDomain: 2 });
    for (const n of ['a', 'b', 'c']) jar.setCookie(`${n}=1; Path=/${n}`, 'http://example.com/');
    expect(store.count()).toBe(2);
    store.removeAll();
    expect(store.count()).toBe(0);
    store.close();
  });

  it('refuses bad options', () => {
    expect(() => new SqliteCookieStore({ location: 5 } as never)).toThrow(errors.InvalidArgumentError);
  });
});
