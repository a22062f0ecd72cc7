// The default export (ts/main.ts, the package entry): an object with every named export, for code written
// as `import undici from 'undici'`.
import { describe, expect, it } from 'vitest';
import ferro, * as named from '../ts/main.js';
import * as index from '../ts/index.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

describe('default export', () => {
  it('has every named export, the same values', () => {
    const names = Object.keys(named).filter((k) => k !== 'default');
    // The entry re-exports index.ts whole.
    expect(names.sort()).toEqual(Object.keys(index).sort());
    expect(names.length).toBeGreaterThan(50);
    expect(Object.keys(ferro).sort()).toEqual(names.sort());
    for (const name of names) expect(ferro[name as keyof typeof ferro], name).toBe(named[name as keyof typeof named]);
  });

  it('works as undici-style code uses it', async () => {
    const srv = cleanup.track(await servers.httpServer((req, res) => res.end(`hi ${req.url}`)));
    const agent = new ferro.Agent();
    cleanup.push(() => agent.close());
    const { statusCode, body } = await ferro.request(`${srv.origin}/r`, { dispatcher: agent });
    expect([statusCode, await body.text()]).toEqual([200, 'hi /r']);
    const res = await ferro.fetch(`${srv.origin}/f`, { dispatcher: agent });
    expect(await res.text()).toBe('hi /f');
    expect(new ferro.errors.InvalidArgumentError('x')).toBeInstanceOf(named.errors.UndiciError);
  });
});
