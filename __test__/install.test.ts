// install() (ts/fetch/install.ts): ferro's fetch, the WHATWG classes, WebSocket and EventSource on globalThis,
// as undici's install().
import { afterEach, describe, expect, it } from 'vitest';
import { CloseEvent, ErrorEvent, EventSource, fetch, FormData, Headers, install, MessageEvent, Request, Response, WebSocket } from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const NAMES = ['fetch', 'Headers', 'Request', 'Response', 'FormData', 'WebSocket', 'CloseEvent', 'ErrorEvent', 'MessageEvent', 'EventSource'];
const globals = globalThis as unknown as Record<string, unknown>;
const saved = Object.fromEntries(NAMES.map((n) => [n, globals[n]]));
afterEach(() => void Object.assign(globals, saved));

describe('install()', () => {
  it('puts ferro on globalThis', () => {
    install();
    expect(globals.fetch).toBe(fetch);
    expect(globals.WebSocket).toBe(WebSocket);
    expect(globals.EventSource).toBe(EventSource);
    expect([globals.CloseEvent, globals.ErrorEvent, globals.MessageEvent]).toEqual([CloseEvent, ErrorEvent, MessageEvent]);
    // The WHATWG classes ferro exports are Node's own: the globals are those classes themselves.
    for (const [name, cls] of Object.entries({ Headers, Request, Response, FormData })) {
      const real = globals[name] as new (...args: unknown[]) => object;
      expect(real, name).toBe(saved[name]);
      expect(new real(...(name === 'Request' ? ['http://x.test/'] : [])), name).toBeInstanceOf(cls);
    }
    expect(new (globals.Headers as typeof Headers)({ a: '1' }).get('a')).toBe('1');
  });

  it('runs globalThis.fetch on ferro, also when installed twice', async () => {
    const agents: (string | undefined)[] = [];
    const srv = cleanup.track(
      await servers.httpServer((req, res) => {
        agents.push(req.headers['user-agent']);
        res.end('ok');
      }),
    );
    await (await globalThis.fetch(srv.origin)).text();
    await (await fetch(srv.origin)).text();
    install();
    install();
    const res = await globalThis.fetch(`${srv.origin}/`, { headers: new globalThis.Headers({ 'x-a': '1' }) });
    expect([res.status, await res.text()]).toEqual([200, 'ok']);
    expect(res).toBeInstanceOf(globalThis.Response);
    // Node's own fetch says 'node'; after install() the global sends what ferro's fetch sends.
    const [node, ferro, installed] = agents;
    expect(node).toBe('node');
    expect(ferro).not.toBe(node);
    expect(installed).toBe(ferro);
  });
});
