// Request / Response / Headers / FormData are exported as Node's own classes, looked up on first use
// (ts/fetch/whatwg-classes.ts): importing ferro must not load Node's fetch implementation, and each
// export must behave as the class it stands for.
import { describe, expect, it } from 'vitest';
import { FormData, Headers, Request, Response } from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';

const cleanup = useCleanup();
const runChild = useChildRuns();

describe('importing ferro', () => {
  it("does not load Node's fetch: request() runs without it, fetch() loads it", async () => {
    const srv = cleanup.track(await servers.httpServer((_req, res) => res.end('ok')));
    const run = await runChild(
      undefined,
      srv.origin,
      `
      const loaded = () => process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
      const seen = [loaded()];
      const { body } = await ferro.request(origin);
      await body.text();
      seen.push(loaded());
      const res = await ferro.fetch(origin);
      await res.text();
      seen.push(loaded(), res instanceof ferro.Response);
      console.log(JSON.stringify(seen));
      `,
    );
    expect(JSON.parse(run.stdout)).toEqual([false, false, true, true]);
  });
});

describe('the exported classes', () => {
  it('construct instances of Node’s classes, and instanceof holds both ways', () => {
    const req = new Request('http://example.test/a', { method: 'POST', body: 'x' });
    expect(req).toBeInstanceOf(globalThis.Request);
    expect(new globalThis.Request('http://example.test/')).toBeInstanceOf(Request);
    expect(req.method).toBe('POST');
    const headers = new Headers({ 'X-A': '1' });
    expect(headers.get('x-a')).toBe('1');
    expect(headers).toBeInstanceOf(globalThis.Headers);
    const form = new FormData();
    form.append('k', 'v');
    expect(form.get('k')).toBe('v');
    expect(form).toBeInstanceOf(globalThis.FormData);
    expect(Request.name).toBe('Request');
    expect(Request.prototype).toBe(globalThis.Request.prototype);
    expect(typeof Headers).toBe('function');
  });

  it('carry the statics (Response.json, Response.error, Response.redirect)', async () => {
    const res = Response.json({ a: 1 }, { status: 201 });
    expect(res).toBeInstanceOf(globalThis.Response);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ a: 1 });
    expect(Response.error().type).toBe('error');
    expect(Response.redirect('http://example.test/b', 302).headers.get('location')).toBe('http://example.test/b');
  });

  it('can be extended: the subclass’s prototype and fields are kept', async () => {
    class Tagged extends Response {
      readonly tag = 'mine';
      override async text(): Promise<string> {
        return `[${await super.text()}]`;
      }
    }
    const t = new Tagged('body');
    expect(t).toBeInstanceOf(Tagged);
    expect(t).toBeInstanceOf(globalThis.Response);
    expect(t.tag).toBe('mine');
    expect(await t.text()).toBe('[body]');
  });

  it('refuse a call without new, as the classes do', () => {
    expect(() => (Headers as unknown as () => unknown)()).toThrow(TypeError);
  });
});
