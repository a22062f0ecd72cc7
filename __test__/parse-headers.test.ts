// util.parseHeaders / util.headerNameToString (ts/core/parse-headers.ts), as undici exports them
// for handler code that gets raw headers.
import { describe, expect, it } from 'vitest';
import { Client, util, type Dispatcher } from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

describe('util', () => {
  it('headerNameToString lowercases strings and latin1 buffers', () => {
    expect(util.headerNameToString('Content-Type')).toBe('content-type');
    expect(util.headerNameToString(Buffer.from('X-Caf\xe9', 'latin1'))).toBe('x-caf\xe9');
  });

  it('parseHeaders collects repeats into arrays and reads buffers as latin1', () => {
    const raw = [Buffer.from('Set-Cookie'), Buffer.from('a=1'), 'set-cookie', 'b=2', 'X-Name', Buffer.from('caf\xe9', 'latin1'), 'Multi', [Buffer.from('x'), 'y'], 'multi', 'z'];
    expect(util.parseHeaders(raw)).toEqual({ 'set-cookie': ['a=1', 'b=2'], 'x-name': 'caf\xe9', multi: ['x', 'y', 'z'] });
  });

  it('parseHeaders writes into the object given and keeps Object.prototype names as headers', () => {
    const target: Record<string, string | string[]> = { existing: 'yes' };
    const out = util.parseHeaders(['__proto__', 'p', 'constructor', 'c', 'toString', 't1', 'tostring', 't2', 'existing', 'again'], target);
    expect(out).toBe(target);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['existing', '__proto__', 'constructor', 'tostring']);
    expect(out['__proto__']).toBe('p');
    expect(out.constructor).toBe('c');
    expect(out.tostring).toEqual(['t1', 't2']);
    expect(out.existing).toEqual(['yes', 'again']);
  });

  it("parses the raw headers a dispatcher hands a handler", async () => {
    const srv = cleanup.track(
      await servers.httpServer((_req, res) => {
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        res.setHeader('X-Custom', 'v');
        res.end('ok');
      }),
    );
    const client = new Client(srv.origin);
    cleanup.push(() => client.close());
    const headers = await new Promise<Record<string, string | string[]>>((resolve, reject) => {
      let parsed: Record<string, string | string[]> = {};
      // The legacy handler interface hands rawHeaders, which is what parseHeaders is for.
      const handler = {
        onConnect: () => {},
        onHeaders: (_status: number, rawHeaders: Buffer[]) => {
          parsed = util.parseHeaders(rawHeaders);
          return true;
        },
        onData: () => true,
        onComplete: () => resolve(parsed),
        onError: reject,
      };
      client.dispatch({ path: '/', method: 'GET' }, handler as unknown as Dispatcher.DispatchHandler);
    });
    expect(headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(headers['x-custom']).toBe('v');
  });
});
