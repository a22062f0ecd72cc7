// A Rust panic never aborts Node: a panic inside a connection task fails that connection's
// requests with an error, the pool opens a new connection, and the process goes on. Debug builds
// carry the trigger (a request for PANIC_TEST_PATH panics when its response head arrives).
// First: the test-hooks build, where native/ holds a release build.
import './fixtures/test-hooks-build.js';
import { describe, expect, it, vi } from 'vitest';
import { once } from 'node:events';
import { Client, errors } from '../ts/index.js';
import { binding } from '../ts/native/binding.js';
import { engineCounts } from '../ts/native/engine.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const PANIC_TEST_PATH = '/__ferro_test_panic__';
const cleanup = useCleanup();

describe.skipIf(!binding.testHooks())('a panic in a connection task', () => {
  it("fails that connection's requests; the client and the process go on", async () => {
    const srv = cleanup.track(await httpServer((req, res) => res.end(`hello ${req.url}`)));
    // A Client has one connection; pipelined, the request behind the panicking one shares it.
    // Closed by the test itself (a second close() after it would be ClientDestroyedError, as in undici).
    const client = new Client(srv.origin, { pipelining: 2 });
    const disconnected = once(client, 'disconnect');
    const [panicked, behind] = await Promise.allSettled([
      client.request({ path: PANIC_TEST_PATH, method: 'GET' }),
      client.request({ path: '/behind', method: 'GET' }),
    ]);
    const lost = { constructor: errors.UndiciError, code: 'UND_ERR', message: 'ferro engine: connection task ended unexpectedly' };
    expect(panicked).toMatchObject({ status: 'rejected', reason: lost });
    if (behind.status === 'rejected') expect(behind.reason).toMatchObject(lost);
    else expect(await behind.value.body.text()).toBe('hello /behind');
    const [, , cause] = await disconnected;
    expect(cause).toBeInstanceOf(errors.UndiciError);
    // The connection slot was given back: the same one-connection client still works.
    const { body } = await client.request({ path: '/after', method: 'GET' });
    expect(await body.text()).toBe('hello /after');
    await client.close();
    // Nothing of the panicked connection is left (its socket closes just after close() resolves).
    await vi.waitFor(() => expect(engineCounts()).toMatchObject({ requests: 0, connections: 0 }));
  });
});
