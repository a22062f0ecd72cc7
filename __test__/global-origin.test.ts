// setGlobalOrigin / getGlobalOrigin (ts/fetch/global-origin.ts): the base relative fetch URLs
// resolve against, shared with undici (and Node's Request) through the same global symbol.
import { afterEach, describe, expect, it } from 'vitest';
// undici 7: undici 8 needs a newer Node than the 20.19 this suite also runs on.
import * as undici from 'undici7';
import { Agent, fetch, getGlobalOrigin, Request, Response, setGlobalOrigin } from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
afterEach(() => setGlobalOrigin(undefined));

describe('global origin', () => {
  it('is unset by default and holds the URL it was given', () => {
    expect(getGlobalOrigin()).toBe(undefined);
    setGlobalOrigin('http://example.com/base/');
    expect(getGlobalOrigin()).toEqual(new URL('http://example.com/base/'));
    setGlobalOrigin(new URL('https://example.org'));
    expect(getGlobalOrigin()?.href).toBe('https://example.org/');
    setGlobalOrigin(undefined);
    expect(getGlobalOrigin()).toBe(undefined);
  });

  it('refuses anything but an http(s) URL with a TypeError', () => {
    expect(() => setGlobalOrigin('ftp://example.com')).toThrow(new TypeError('Only http & https urls are allowed, received ftp:'));
    expect(() => setGlobalOrigin('not a url')).toThrow(TypeError);
    expect(getGlobalOrigin()).toBe(undefined);
  });

  it('is where fetch() sends a relative URL (simple GET, Request path and redirects)', async () => {
    const seen: string[] = [];
    const srv = cleanup.track(
      await servers.httpServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url === '/go') {
          res.writeHead(302, { location: 'landed' }).end();
          return;
        }
        res.end(`at ${req.url}`);
      }),
    );
    const agent = new Agent();
    cleanup.push(() => agent.close());
    await expect(fetch('/nowhere', { dispatcher: agent })).rejects.toThrow(TypeError);

    setGlobalOrigin(`${srv.origin}/app/`);
    const a = await fetch('/abs?x=1', { dispatcher: agent });
    expect([a.url, await a.text()]).toEqual([`${srv.origin}/abs?x=1`, 'at /abs?x=1']);
    const b = await fetch('rel', { dispatcher: agent, method: 'POST', body: 'hi' });
    expect(await b.text()).toBe('at /app/rel');
    const c = await fetch(new Request('/go'), { dispatcher: agent });
    expect([c.url, c.redirected, await c.text()]).toEqual([`${srv.origin}/landed`, true, 'at /landed']);
    expect(seen).toEqual(['GET /abs?x=1', 'POST /app/rel', 'GET /go', 'GET /landed']);
    expect(Response.redirect('/to').headers.get('location')).toBe(`${srv.origin}/to`);
  });

  it("is undici's global origin, both ways", () => {
    setGlobalOrigin('http://ferro.example');
    expect(undici.getGlobalOrigin()?.href).toBe('http://ferro.example/');
    undici.setGlobalOrigin('http://undici.example');
    expect(getGlobalOrigin()?.href).toBe('http://undici.example/');
  });
});
