// Cookie helpers on Headers (ts/cookies/): the Cookie request header read, Set-Cookie headers
// parsed (RFC 6265bis §5.4) and written (RFC 6265 §4.1.1), with undici's semantics. Cases follow
// undici's test/cookie suite.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deleteCookie, errors, fetch, getCookies, getSetCookies, Headers, parseCookie, setCookie, type Cookie } from '../ts/index.js';

function setCookieOf(cookie: Cookie): string | null {
  const headers = new Headers();
  setCookie(headers, cookie);
  return headers.get('set-cookie');
}

describe('getCookies', () => {
  it('reads the Cookie header into a record', () => {
    expect(getCookies(new Headers())).toEqual({});
    expect(getCookies(new Headers({ cookie: 'foo=bar' }))).toEqual({ foo: 'bar' });
    expect(getCookies(new Headers({ cookie: 'full=of  ; tasty=chocolate' }))).toEqual({ full: 'of  ', tasty: 'chocolate' });
    expect(getCookies(new Headers({ cookie: 'PREF=al=en-GB&f1=123; wide=1; SID=123' }))).toEqual({
      PREF: 'al=en-GB&f1=123',
      wide: '1',
      SID: '123',
    });
    expect(getCookies(new Headers({ cookie: 'flag; a=1' }))).toEqual({ flag: '', a: '1' });
  });

  it('keeps a cookie named __proto__', () => {
    const cookies = getCookies(new Headers({ cookie: '__proto__=x; a=1' }));
    expect(Object.getPrototypeOf(cookies)).toBe(null);
    expect(cookies['__proto__']).toBe('x');
    expect(cookies.a).toBe('1');
  });
});

describe('setCookie', () => {
  it('writes the attributes in order', () => {
    expect(setCookieOf({ name: 'Space', value: 'Cat' })).toBe('Space=Cat');
    expect(setCookieOf({ name: 'Space', value: 'Cat', httpOnly: true, secure: true, maxAge: 0 })).toBe('Space=Cat; Secure; HttpOnly; Max-Age=0');
    expect(
      setCookieOf({
        name: 'Space',
        value: 'Cat',
        httpOnly: true,
        secure: true,
        maxAge: 2,
        domain: 'deno.land',
        path: '/',
        expires: new Date(Date.UTC(1983, 0, 7, 15, 32)),
        sameSite: 'Lax',
        unparsed: ['unparsed=keyvalue', 'batman=Bruce'],
      }),
    ).toBe('Space=Cat; Secure; HttpOnly; Max-Age=2; Domain=deno.land; Path=/; Expires=Fri, 07 Jan 1983 15:32:00 GMT; SameSite=Lax; unparsed=keyvalue; batman=Bruce');
    expect(setCookieOf({ name: 'Space', value: 'Cat', expires: Date.UTC(1983, 0, 7, 15, 32) })).toBe('Space=Cat; Expires=Fri, 07 Jan 1983 15:32:00 GMT');
    // The epoch is a date, not an absent one.
    expect(setCookieOf({ name: 'a', value: 'b', expires: 0 })).toBe('a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
    expect(setCookieOf({ name: 'a', value: '"quoted"' })).toBe('a="quoted"');
  });

  it('gives prefixed names the attributes their prefix promises', () => {
    expect(setCookieOf({ name: '__Secure-Kitty', value: 'Meow' })).toBe('__Secure-Kitty=Meow; Secure');
    expect(setCookieOf({ name: '__Host-Kitty', value: 'Meow', domain: 'deno.land' })).toBe('__Host-Kitty=Meow; Secure; Path=/');
  });

  it('appends one header per cookie and none for an empty name', () => {
    const headers = new Headers();
    setCookie(headers, { name: 'cookie-1', value: 'value-1', secure: true });
    setCookie(headers, { name: 'cookie-2', value: 'value-2', maxAge: 3600 });
    expect(headers.getSetCookie()).toEqual(['cookie-1=value-1; Secure', 'cookie-2=value-2; Max-Age=3600']);
    expect(setCookieOf({ name: '', value: '' })).toBe(null);
  });

  it('leaves out an expiry no Date can hold', () => {
    for (const expires of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1, new Date(Number.NaN)]) {
      expect(setCookieOf({ name: 'a', value: 'b', expires })).toBe('a=b');
    }
  });

  it.each([
    ['name', ['"id"', 'id\t', 'i\td', 'i d', 'i;d', '{id}', '[id]', '"', 'id\u0091'].map((name) => ({ name, value: 'Cat' }))],
    ['value', ['1f\tWa', '\t', '1f Wa', '1f;Wa', '"1fWa', '1f\\Wa', '1f"Wa', '"', '1fWa\u0005', '1f\u0091Wa', 'United Kingdom'].map((value) => ({ name: 'Space', value }))],
    ['path', [{ name: 'Space', value: 'Cat', path: '/;domain=sub.domain.com' }]],
    [
      'domain',
      ['-domain.com', 'domain.org.', 'domain.org-', '.example.com', 'example..com', 'example-.com', 'exa_mple.com', 'a'.repeat(64), 'a'.repeat(256), 'example.com; SameSite=None'].map((domain) => ({ name: 'Space', value: 'Cat', domain })),
    ],
    ['max-age', [{ name: 'Space', value: 'Cat', maxAge: -1 }]],
  ] as [string, Cookie[]][])('refuses an invalid %s with InvalidArgumentError', (what, cookies) => {
    for (const cookie of cookies) {
      expect(() => setCookie(new Headers(), cookie), JSON.stringify(cookie)).toThrow(new errors.InvalidArgumentError(`Invalid cookie ${what}`));
    }
  });

  it('accepts the root domain and host names at the limits', () => {
    // (Headers trims the value's trailing space.)
    expect(setCookieOf({ name: 'a', value: 'b', domain: ' ' })).toBe('a=b; Domain=');
    expect(setCookieOf({ name: 'a', value: 'b', domain: `${'a'.repeat(63)}.x-1.com` })).toBe(`a=b; Domain=${'a'.repeat(63)}.x-1.com`);
  });

  it('refuses unparsed attributes that would inject others', () => {
    for (const part of ['X-Custom=val; HttpOnly', 'Purpose=tracking; SameSite=None; Secure', 'HttpOnly; X-Custom=val', 'novalue']) {
      expect(() => setCookie(new Headers(), { name: 'Space', value: 'Cat', unparsed: [part] }), part).toThrow(errors.InvalidArgumentError);
    }
  });

  it('refuses a malformed cookie dictionary with InvalidArgumentError', () => {
    const bad: unknown[] = [null, 'a=b', { value: 'b' }, { name: 'a' }, { name: 'a', value: 'b', sameSite: 'strict' }, { name: 'a', value: 'b', maxAge: Number.NaN }, { name: 'a', value: 'b', unparsed: 5 }];
    for (const cookie of bad) {
      expect(() => setCookie(new Headers(), cookie as Cookie), JSON.stringify(cookie)).toThrow(errors.InvalidArgumentError);
    }
  });
});

describe('deleteCookie', () => {
  it('appends an expired cookie, with the path and domain given', () => {
    const headers = new Headers();
    deleteCookie(headers, 'deno');
    deleteCookie(headers, 'Space', { domain: '', path: '' });
    deleteCookie(headers, 'id', { domain: 'example.com', path: '/app' });
    expect(headers.getSetCookie()).toEqual([
      'deno=; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
      'Space=; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
      'id=; Domain=example.com; Path=/app; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
    ]);
  });
});

describe('getSetCookies / parseCookie', () => {
  it('parses each Set-Cookie header', () => {
    const headers = new Headers([
      ['set-cookie', 'Space=Cat; Secure; HttpOnly; Max-Age=2; Domain=.Deno.Land; Path=/; Expires=Fri, 07 Jan 1983 15:32:00 GMT; SameSite=Strict; batman=Bruce'],
      ['set-cookie', 'cookie-2=value-2; Max-Age=-1'],
    ]);
    expect(getSetCookies(headers)).toEqual([
      {
        name: 'Space',
        value: 'Cat',
        secure: true,
        httpOnly: true,
        maxAge: 2,
        domain: 'deno.land',
        path: '/',
        expires: new Date(Date.UTC(1983, 0, 7, 15, 32)),
        sameSite: 'Strict',
        unparsed: ['batman=Bruce'],
      },
      { name: 'cookie-2', value: 'value-2', maxAge: -1 },
    ]);
    expect(getSetCookies(new Headers())).toEqual([]);
  });

  it('ignores attribute values it cannot read', () => {
    for (const maxAge of ['-', '--1', '-1a', '+1', '']) {
      expect(parseCookie(`a=b; Max-Age=${maxAge}`), maxAge).toEqual({ name: 'a', value: 'b' });
    }
    expect(parseCookie('id=a3fWa; Expires=not-a-date')).toEqual({ name: 'id', value: 'a3fWa' });
    expect(parseCookie('a=b; SameSite=none')).toEqual({ name: 'a', value: 'b', sameSite: 'None' });
    expect(parseCookie('a=b; SameSite=StrictLax')).toEqual({ name: 'a', value: 'b' });
    expect(parseCookie('a=b; Path=relative')).toEqual({ name: 'a', value: 'b', path: '/' });
    expect(parseCookie(`a=b; Domain=${'x'.repeat(1025)}`)).toEqual({ name: 'a', value: 'b' });
  });

  it('trims whitespace and keeps values as sent (no percent-decoding)', () => {
    expect(parseCookie('FOO    = bar;   baz  =   raz')).toEqual({ name: 'FOO', value: 'bar', unparsed: ['baz=raz'] });
    expect(parseCookie('\tfoo\t=\tbar\t')).toEqual({ name: 'foo', value: 'bar' });
    expect(parseCookie('foo=bar;fizz  ;  buzz')).toEqual({ name: 'foo', value: 'bar', unparsed: ['fizz=', 'buzz='] });
    expect(parseCookie('  fizz; foo=  bar')).toEqual({ name: '', value: 'fizz', unparsed: ['foo=bar'] });
    expect(parseCookie('token=legit%0d%0aSet-Cookie:%20evil')).toEqual({ name: 'token', value: 'legit%0d%0aSet-Cookie:%20evil' });
    expect(parseCookie('foo="bar=1&name=Magic+Mouse"')).toEqual({ name: 'foo', value: '"bar=1&name=Magic+Mouse"' });
    expect(parseCookie('toString=foo;valueOf=bar')).toEqual({ name: 'toString', value: 'foo', unparsed: ['valueOf=bar'] });
  });

  it('ignores a cookie with control characters or over 4096 bytes of name and value', () => {
    expect(parseCookie('a=b\x01c')).toBe(null);
    expect(parseCookie('a=b\x7f')).toBe(null);
    expect(parseCookie('a=b\tc')).toEqual({ name: 'a', value: 'b\tc' });
    expect(parseCookie(`a=${'x'.repeat(4095)}`)).toEqual({ name: 'a', value: 'x'.repeat(4095) });
    expect(parseCookie(`a=${'x'.repeat(4096)}`)).toBe(null);
  });

  it('round-trips what setCookie writes', () => {
    const cookie: Cookie = { name: 'id', value: 'a3fWa', secure: true, httpOnly: true, maxAge: 60, domain: 'example.com', path: '/app', sameSite: 'None' };
    expect(parseCookie(setCookieOf(cookie)!)).toEqual(cookie);
  });
});

describe('the Headers check', () => {
  it('refuses anything but a Headers with ERR_INVALID_THIS', () => {
    class FakeHeaders {
      [Symbol.toStringTag] = 'Headers';
      get(): string {
        return 'a=b';
      }
    }
    const fake = new FakeHeaders() as unknown as Headers;
    const calls = [() => getCookies(fake), () => getSetCookies(fake), () => setCookie(fake, { name: 'a', value: 'b' }), () => deleteCookie(fake, 'a')];
    for (const call of calls) expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: 'Illegal invocation', code: 'ERR_INVALID_THIS' }));
  });

  it('takes the global Headers and counts arguments as WebIDL does', () => {
    expect(getCookies(new globalThis.Headers({ cookie: 'a=b' }) as unknown as Headers)).toEqual({ a: 'b' });
    expect(() => (getCookies as (...args: unknown[]) => unknown)()).toThrow(new TypeError('getCookies: 1 argument required, but 0 found.'));
    expect(() => (setCookie as (...args: unknown[]) => unknown)(new Headers())).toThrow(new TypeError('setCookie: 2 arguments required, but only 1 found.'));
  });
});

describe('on a real response', () => {
  it("reads a server's Set-Cookie headers from fetch and sends cookies back", async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.cookie);
      res.setHeader('set-cookie', ['session=abc123; Path=/; HttpOnly; SameSite=Lax', 'theme=dark; Max-Age=3600']);
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await fetch(origin);
      await res.text();
      const cookies = getSetCookies(res.headers);
      expect(cookies).toEqual([
        { name: 'session', value: 'abc123', path: '/', httpOnly: true, sameSite: 'Lax' },
        { name: 'theme', value: 'dark', maxAge: 3600 },
      ]);
      const request = new Headers({ cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') });
      expect(getCookies(request)).toEqual({ session: 'abc123', theme: 'dark' });
      await (await fetch(origin, { headers: request })).text();
      expect(seen).toEqual([undefined, 'session=abc123; theme=dark']);
    } finally {
      server.close();
    }
  });
});
