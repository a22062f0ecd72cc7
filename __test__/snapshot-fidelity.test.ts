// What a snapshot keeps, exactly: secrets masked by default, multi-value headers, bodies byte for
// byte in every form, controller-driven replay (pause, resume, abort), maxSnapshots, autoFlush.
import { describe, expect, it, vi } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { DispatchController, Dispatcher, RequestOptions } from '../ts/index.js';
import { fetch } from '../ts/fetch/fetch.js';
import { SnapshotAgent } from '../ts/snapshot/snapshot-agent.js';
import type { SnapshotEntry } from '../ts/snapshot/snapshot-format.js';
import { BIG, BINARY, snapshotServer, tempDir, snapshotTestKit } from './fixtures/snapshot.js';
import { viaFetch, viaRequest, viaStream } from './fixtures/snapshot-apis.js';

const { cleanup, agent, server, snapshotFile } = snapshotTestKit();

async function send(d: Dispatcher, origin: string, req: Partial<RequestOptions>): Promise<string> {
  const res = await d.request({ origin, path: '/count', method: 'GET', ...req } as RequestOptions);
  return res.body.text();
}

/** A playback agent holding what `recorder` recorded. */
function playerOf(recorder: SnapshotAgent, options: SnapshotAgent.Options = {}): SnapshotAgent {
  const player = agent({ ...options, mode: 'playback' });
  player.replaceSnapshots(recorder.getRecorder().getEntries());
  return player;
}

describe('secrets', () => {
  const secrets = {
    authorization: 'Bearer tok-1234567',
    'proxy-authorization': 'Basic dXNlcjpwYXNzd29yZA==',
    cookie: 'sid=cookie-secret-42; theme=plain',
  };

  it('never writes authorization, proxy-authorization, cookie or set-cookie values in clear', async () => {
    const s = await server();
    const file = snapshotFile();
    const a = agent({ snapshotPath: file });
    await send(a, s.origin, { path: '/cookies', headers: secrets });
    await a.close();
    const text = readFileSync(file, 'utf8');
    for (const secret of ['tok-1234567', 'dXNlcjpwYXNzd29yZA==', 'cookie-secret-42', 's3cr3t-session']) {
      expect(text).not.toContain(secret);
    }
    const [entry] = JSON.parse(text) as SnapshotEntry[];
    expect(entry!.snapshot.request.headers).toEqual({
      authorization: 'Bearer [REDACTED]',
      'proxy-authorization': 'Basic [REDACTED]',
      cookie: 'sid=[REDACTED]; theme=[REDACTED]',
    });
    expect(entry!.snapshot.response.headers['set-cookie']).toEqual(['session=[REDACTED]; Path=/; HttpOnly', 'theme=[REDACTED]']);
    // The server still got the real values.
    expect(s.seen[0]!.headers.authorization).toBe(secrets.authorization);
  });

  it('masked headers take no part in matching, so a new token still plays back', async () => {
    const s = await server();
    const recorder = agent();
    const live = await send(recorder, s.origin, { headers: { authorization: 'Bearer old' } });
    const player = playerOf(recorder);
    expect(await send(player, s.origin, { headers: { authorization: 'Bearer new' } })).toBe(live);
  });

  it('redactSecrets: false stores and matches them in clear', async () => {
    const s = await server();
    const file = snapshotFile();
    const a = agent({ snapshotPath: file, redactSecrets: false });
    await send(a, s.origin, { path: '/cookies', headers: secrets });
    await a.close();
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('tok-1234567');
    expect(text).toContain('s3cr3t-session');
    const player = agent({ snapshotPath: file, mode: 'playback', redactSecrets: false });
    await expect(send(player, s.origin, { path: '/cookies', headers: { ...secrets, authorization: 'Bearer x' } })).rejects.toThrow(
      'First difference: header "authorization": recorded "Bearer tok-1234567", request has "Bearer x"',
    );
  });
});

describe('multi-value headers', () => {
  it('several set-cookie (and other repeated) response headers play back as arrays', async () => {
    const s = await server();
    const recorder = agent({ redactSecrets: false });
    const live = await viaRequest(recorder, s.origin, '/cookies');
    const liveFetch = await fetch(`${s.origin}/cookies`, { dispatcher: recorder });
    expect(live.headers['set-cookie']).toEqual(['session=s3cr3t-session; Path=/; HttpOnly', 'theme=dark']);
    const player = playerOf(recorder, { redactSecrets: false });
    const replayed = await viaRequest(player, s.origin, '/cookies');
    expect(replayed.headers['set-cookie']).toEqual(live.headers['set-cookie']);
    expect(replayed.headers['x-multi']).toEqual(['one', 'two']);
    const replayedFetch = await fetch(`${s.origin}/cookies`, { dispatcher: player });
    expect(replayedFetch.headers.getSetCookie()).toEqual(liveFetch.headers.getSetCookie());
  });

  it('repeated request headers are stored as arrays and matched value by value', async () => {
    const s = await server();
    const recorder = agent();
    await send(recorder, s.origin, { headers: { 'x-list': ['a', 'b'] } });
    expect(recorder.getRecorder().getSnapshots()[0]!.request.headers).toEqual({ 'x-list': ['a', 'b'] });
    const player = playerOf(recorder);
    await expect(send(player, s.origin, { headers: ['x-list', 'a', 'x-list', 'b'] })).resolves.toContain('"n":1');
    await expect(send(player, s.origin, { headers: { 'x-list': ['b', 'a'] } })).rejects.toThrow('No snapshot found');
  });
});

describe('bodies, byte for byte', () => {
  it('binary responses replay identically through request, stream and fetch', async () => {
    const s = await server();
    const recorder = agent();
    const live = [await viaRequest(recorder, s.origin, '/binary'), await viaStream(recorder, s.origin, '/binary'), await viaFetch(recorder, s.origin, '/binary')];
    for (const outcome of live) expect(Buffer.from(outcome.body, 'base64').equals(BINARY)).toBe(true);
    await s.close();
    const player = playerOf(recorder);
    expect([await viaRequest(player, s.origin, '/binary'), await viaStream(player, s.origin, '/binary'), await viaFetch(player, s.origin, '/binary')]).toEqual(live);
  });

  const text = 'héllo → wörld';
  const forms: [string, () => RequestOptions['body'], Buffer][] = [
    ['string', () => text, Buffer.from(text)],
    ['Buffer', () => Buffer.from(BINARY), BINARY],
    ['Uint8Array', () => new Uint8Array(BINARY), BINARY],
    ['iterable', () => [BINARY.subarray(0, 100), BINARY.subarray(100)], BINARY],
    [
      'generator',
      () =>
        (function* () {
          yield 'héllo ';
          yield Buffer.from('→ wörld');
        })(),
      Buffer.from(text),
    ],
    [
      'async iterable',
      () =>
        (async function* () {
          yield BINARY.subarray(0, 7);
          yield new Uint8Array(BINARY.subarray(7));
        })(),
      BINARY,
    ],
    ['stream', () => Readable.from([BINARY.subarray(0, 512), BINARY.subarray(512)]), BINARY],
  ];

  for (const [name, body, bytes] of forms) {
    it(`${name} request bodies are sent, stored and hashed by their bytes`, async () => {
      const s = await server();
      const recorder = agent();
      await send(recorder, s.origin, { method: 'POST', body: body() });
      expect(s.seen[0]!.body.equals(bytes)).toBe(true);
      const stored = recorder.getRecorder().getSnapshots()[0]!.request;
      expect(stored.body).not.toContain('[object');
      const decoded = stored.bodyEncoding === 'base64' ? Buffer.from(stored.body!, 'base64') : Buffer.from(stored.body!);
      expect(decoded.equals(bytes)).toBe(true);

      // The same bytes in another form find the snapshot; other bytes do not.
      const player = playerOf(recorder);
      await expect(send(player, s.origin, { method: 'POST', body: Readable.from([bytes]) })).resolves.toContain('"n":1');
      await expect(send(player, s.origin, { method: 'POST', body: Buffer.concat([bytes, Buffer.from('!')]) })).rejects.toThrow(
        'No snapshot found',
      );
    });
  }

  it('stores bytes that are not UTF-8 as base64, marked with bodyEncoding', async () => {
    const s = await server();
    const recorder = agent();
    await send(recorder, s.origin, { method: 'POST', body: BINARY });
    expect(recorder.getRecorder().getSnapshots()[0]!.request).toMatchObject({ body: BINARY.toString('base64'), bodyEncoding: 'base64' });
  });

  it('fetch bodies (bytes, strings, streams) are hashed by content', async () => {
    const s = await server();
    const recorder = agent();
    const post = (d: Dispatcher, body: BodyInit): Promise<string> =>
      fetch(`${s.origin}/count`, { method: 'POST', body, dispatcher: d, duplex: 'half' } as RequestInit & { dispatcher: Dispatcher }).then((r) =>
        r.text(),
      );
    const live = await post(recorder, new Uint8Array(BINARY));
    expect(s.seen[0]!.body.equals(BINARY)).toBe(true);
    const player = playerOf(recorder);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(BINARY.subarray(0, 10)));
        controller.enqueue(new Uint8Array(BINARY.subarray(10)));
        controller.close();
      },
    });
    expect(await post(player, stream)).toBe(live);
    expect(await post(player, new Blob([BINARY]))).toBe(live);
    // Other bytes (no content-type either, so the body is the only difference) match nothing.
    await expect(post(player, new Uint8Array(Buffer.from('something else')))).rejects.toMatchObject({
      name: 'TypeError',
      cause: { name: 'MockNotMatchedError', code: 'UND_MOCK_ERR_MOCK_NOT_MATCHED', message: expect.stringContaining('First difference: body differs') },
    });
  });
});

describe('replay honours the controller', () => {
  interface Run {
    received: number;
    whilePaused: number;
    ended: boolean;
    error: Error | undefined;
  }

  /** Pauses at the first chunk, waits a few turns of the event loop, resumes; or aborts there. */
  function drive(d: Dispatcher, origin: string, action: 'pause' | 'abort'): Promise<Run> {
    return new Promise((resolve) => {
      const run: Run = { received: 0, whilePaused: -1, ended: false, error: undefined };
      let first = true;
      d.dispatch(
        { origin, path: '/big', method: 'GET' },
        {
          onResponseData(controller: DispatchController, chunk: Buffer) {
            run.received += chunk.length;
            if (!first) return;
            first = false;
            if (action === 'abort') return controller.abort(new Error('stop here'));
            controller.pause();
            const at = run.received;
            void (async () => {
              for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
              run.whilePaused = run.received - at;
              expect(controller.paused).toBe(true);
              controller.resume();
            })();
          },
          onResponseEnd() {
            run.ended = true;
            resolve(run);
          },
          onResponseError(_controller, err) {
            run.error = err;
            resolve(run);
          },
        },
      );
    });
  }

  it('pause() stops delivery until resume(); the whole body then arrives, as with a live response', async () => {
    const s = await server();
    const recorder = agent();
    const live = await drive(recorder, s.origin, 'pause');
    expect(live).toMatchObject({ received: BIG.length, ended: true, error: undefined });
    const replayed = await drive(playerOf(recorder), s.origin, 'pause');
    // Nothing at all arrives while a replay is paused.
    expect(replayed).toMatchObject({ received: BIG.length, whilePaused: 0, ended: true, error: undefined });
  });

  it('abort() ends delivery with the reason, as with a live response', async () => {
    const s = await server();
    const recorder = agent();
    await send(recorder, s.origin, { path: '/big' });
    const replayed = await drive(playerOf(recorder), s.origin, 'abort');
    expect(replayed.ended).toBe(false);
    expect(replayed.error?.message).toBe('stop here');
    expect(replayed.received).toBeLessThan(BIG.length);
    // An aborted live response is not recorded.
    const live = await drive(recorder, s.origin, 'abort');
    expect(live.error?.message).toBe('stop here');
    expect(recorder.getRecorder().size()).toBe(1);
  });
});

describe('maxSnapshots and autoFlush', () => {
  it('maxSnapshots keeps the newest interactions', async () => {
    const s = await server();
    const a = agent({ maxSnapshots: 2 });
    for (const q of ['1', '2', '3']) await send(a, s.origin, { path: `/count?${q}` });
    expect(a.getRecorder().size()).toBe(2);
    expect(a.getRecorder().getSnapshots().map((r) => new URL(r.request.url).search)).toEqual(['?2', '?3']);
  });

  it('autoFlush saves every flushInterval while something changed', async () => {
    const s = await server();
    const file = snapshotFile();
    const a = agent({ snapshotPath: file, autoFlush: true, flushInterval: 10 });
    await send(a, s.origin, { path: '/static' });
    await vi.waitFor(() => expect(existsSync(file)).toBe(true), { timeout: 5000, interval: 5 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveLength(1);
    await send(a, s.origin, { path: '/static?more' });
    await vi.waitFor(() => expect(JSON.parse(readFileSync(file, 'utf8'))).toHaveLength(2), { timeout: 5000, interval: 5 });
  });
});
