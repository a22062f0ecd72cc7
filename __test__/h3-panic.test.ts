// A Rust panic in the HTTP/3 path never takes the process down: a panicking stream task fails its
// own request, and the connection and the client go on (test-hooks builds carry the trigger).
// First: the test-hooks build, where native/ holds a release build.
import './fixtures/test-hooks-build.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, errors } from '../ts/index.js';
import { binding } from '../ts/native/binding.js';
import { Cleanup } from './fixtures/cleanup.js';
import { ca } from './fixtures/h2.js';
import { h3Server } from './fixtures/h3.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe.skipIf(!binding.testHooks())('a panic in an HTTP/3 stream task', () => {
  it('fails that request only; the connection goes on', async () => {
    const server = cleanup.add(await h3Server());
    const client = cleanup.add(new Client(server.origin, { connect: { ca }, allowH3: true, h3Options: { priorKnowledge: true } }));
    await (await client.request({ path: '/echo', method: 'GET' })).body.dump();
    const err = await client.request({ path: '/__ferro_test_panic__', method: 'GET' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    const after = await client.request({ path: '/echo', method: 'GET' });
    expect(after.headers['x-conn']).toBe('1');
    await after.body.dump();
  });
});
