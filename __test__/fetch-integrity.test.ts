// fetch's `integrity` option (Subresource Integrity, ts/fetch/integrity.ts): the whole body is
// read and checked before fetch resolves; a mismatch rejects as undici does, with
// TypeError('fetch failed') caused by Error('integrity mismatch').
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import { Agent } from '../ts/index.js';
import { fetch, type FetchInit } from '../ts/fetch/fetch.js';
import { strongestMetadata } from '../ts/fetch/integrity.js';
import * as servers from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { useChildRuns } from './fixtures/child-run.js';
import { GC_PRELUDE } from './fixtures/child-gc.js';

const cleanup = useCleanup();
const runChild = useChildRuns();
const serve = async (...args: Parameters<typeof servers.httpServer>) => cleanup.track(await servers.httpServer(...args));

function agent(): Agent {
  const a = new Agent();
  cleanup.push(() => a.destroy());
  return a;
}

const BODY = 'Hello world!';
const digest = (alg: string, body: string | Buffer = BODY): string => createHash(alg).update(body).digest('base64');
const SHA256 = digest('sha256');
const SHA384 = digest('sha384');
const SHA512 = digest('sha512');
/** A digest of other bytes: what a tampered body would be checked against. */
const OTHER = (alg: string): string => digest(alg, 'Hello world?');
const toUrl = (b64: string): string => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

async function origin(body: string | Buffer = BODY, headers: Record<string, string> = {}): Promise<string> {
  const srv = await serve((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
  return srv.origin;
}

function fetchWith(url: string, integrity: string, init: FetchInit = {}): Promise<Response> {
  return fetch(url, { dispatcher: agent(), integrity, ...init });
}

/** What undici rejects with on a mismatch. */
async function expectMismatch(pending: Promise<Response>): Promise<void> {
  const err = await pending.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TypeError);
  expect((err as TypeError).message).toBe('fetch failed');
  const cause = (err as TypeError).cause;
  expect(cause).toBeInstanceOf(Error);
  expect((cause as Error).message).toBe('integrity mismatch');
}

describe('fetch with integrity', () => {
  it.each([
    ['sha256', SHA256],
    ['sha384', SHA384],
    ['sha512', SHA512],
  ])('a correct %s digest resolves with the body', async (alg, value) => {
    const url = await origin();
    expect(await (await fetchWith(url, `${alg}-${value}`)).text()).toBe(BODY);
    // The body checked and held is served through every consumer.
    expect(Buffer.from(await (await fetchWith(url, `${alg}-${value}`)).arrayBuffer()).toString()).toBe(BODY);
    const streamed = await fetchWith(url, `${alg}-${value}`);
    const chunks: Uint8Array[] = [];
    for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe(BODY);
    expect(await (await fetchWith(url, `${alg}-${value}`)).blob().then((b) => b.text())).toBe(BODY);
  });

  it.each(['sha256', 'sha384', 'sha512'])('a wrong or tampered %s digest rejects with fetch failed / integrity mismatch', async (alg) => {
    const url = await origin();
    await expectMismatch(fetchWith(url, `${alg}-${OTHER(alg)}`));
    // The same digest, but the server sends other bytes.
    const tampered = await origin('Hello world?');
    await expectMismatch(fetchWith(tampered, `${alg}-${digest(alg)}`));
  });

  it('accepts base64url and unpadded digests, and ignores options after ?', async () => {
    const url = await origin();
    for (const integrity of [
      `sha256-${toUrl(SHA256)}`,
      `sha512-${toUrl(SHA512)}`,
      `sha256-${SHA256.replace(/=+$/, '')}`,
      `sha384-${SHA384}?some-option`,
      `SHA256-${SHA256}`,
    ]) {
      expect(await (await fetchWith(url, integrity)).text(), integrity).toBe(BODY);
    }
    await expectMismatch(fetchWith(url, `sha256-${toUrl(OTHER('sha256'))}`));
  });

  it('with several digests only the strongest algorithm counts, and any of its digests matches', async () => {
    const url = await origin();
    // A correct sha256 does not save a wrong sha512 (or a malformed sha384), in either order.
    await expectMismatch(fetchWith(url, `sha256-${SHA256} sha512-${OTHER('sha512')}`));
    await expectMismatch(fetchWith(url, `sha512-${OTHER('sha512')} sha256-${SHA256}`));
    await expectMismatch(fetchWith(url, `sha256-${SHA256} sha384-ä`));
    // A wrong weaker digest does not matter.
    expect(await (await fetchWith(url, `sha256-${OTHER('sha256')} sha384-${SHA384}`)).text()).toBe(BODY);
    // One of several digests for the strongest algorithm is enough; whitespace of any kind separates.
    expect(await (await fetchWith(url, `\tsha512-${OTHER('sha512')}\n sha512-${SHA512} sha256-x `)).text()).toBe(BODY);
  });

  it('unknown algorithms are ignored; a known one with no digest matches nothing', async () => {
    const url = await origin();
    for (const integrity of ['what-integrityisthis', 'md5-XUFAKrxLKna5cZ2REBfFkg==', `sha1-x sha-256-${SHA256}`, '  ']) {
      expect(await (await fetchWith(url, integrity)).text(), integrity).toBe(BODY);
    }
    // A known algorithm next to unknown ones is still checked.
    await expectMismatch(fetchWith(url, `md5-x sha256-${OTHER('sha256')}`));
    for (const integrity of ['sha256', 'sha256-', 'sha256--', 'sha256-ä']) await expectMismatch(fetchWith(url, integrity));
  });

  it('an empty integrity checks nothing and resolves before the body ends', async () => {
    let finish!: () => void;
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('part one, ');
      finish = () => res.end('part two');
    });
    const res = await fetchWith(srv.origin, '');
    finish();
    expect(await res.text()).toBe('part one, part two');
  });

  it('the digest is of the decoded body', async () => {
    const url = await origin(zlib.gzipSync(BODY), { 'content-encoding': 'gzip' });
    expect(await (await fetchWith(url, `sha256-${SHA256}`)).text()).toBe(BODY);
    await expectMismatch(fetchWith(url, `sha256-${digest('sha256', zlib.gzipSync(BODY))}`));
  });

  it('a Request carries its integrity', async () => {
    const url = await origin();
    await expectMismatch(fetch(new Request(url, { integrity: `sha256-${OTHER('sha256')}` }), { dispatcher: agent() }));
    expect(await (await fetch(new Request(url, { integrity: `sha256-${SHA256}` }), { dispatcher: agent() })).text()).toBe(BODY);
  });

  it('a response without a body (HEAD, 204) fails whatever the metadata, as the Fetch standard says', async () => {
    const url = await origin();
    for (const init of [{ method: 'HEAD' }, {}]) {
      const target = init.method === 'HEAD' ? url : (await serve((_req, res) => res.writeHead(204).end())).origin;
      const err = await fetchWith(target, `sha256-${SHA256}`, init).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect((err as TypeError).message).toBe('fetch failed');
      expect((err as TypeError).cause).toBeInstanceOf(Error);
    }
  });

  it('a body that ends early rejects fetch itself (the response is never returned)', async () => {
    // The head and part of the body arrive, then the connection closes short of content-length:
    // without integrity fetch would have resolved at the head and only the body would fail.
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part of it', () => res.socket!.end());
    });
    const err = await fetchWith(srv.origin, `sha256-${SHA256}`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).message).toBe('fetch failed');
    expect((err as TypeError).cause).toBeInstanceOf(Error);
  });

  it('an abort while the body is read rejects with the signal reason', async () => {
    const ac = new AbortController();
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('the first part, and the rest never comes');
    });
    // Aborts once the first body bytes reached fetch, after the head it would otherwise resolve at.
    const dispatcher = agent().compose((dispatch) => (opts, handler) =>
      dispatch(opts, {
        onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
        onResponseStart: (c, status, headers, message) => handler.onResponseStart?.(c, status, headers, message),
        onResponseData: (c, chunk) => {
          handler.onResponseData?.(c, chunk);
          ac.abort(new Error('stop here'));
        },
        onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
        onResponseError: (c, err) => handler.onResponseError?.(c, err),
      }),
    );
    await expect(fetch(srv.origin, { dispatcher, integrity: `sha256-${SHA256}`, signal: ac.signal })).rejects.toThrow('stop here');
  });

  it('parses the metadata as the SRI spec says', () => {
    expect(strongestMetadata('')).toBeNull();
    expect(strongestMetadata('md5-a sha-1-b sha2567-c')).toBeNull();
    expect(strongestMetadata('sha256-a?x sha384-b sha384-c-d?y sha256-e')).toEqual({ algorithm: 'sha384', digests: ['b', 'c-d'] });
    expect(strongestMetadata('sha512')).toEqual({ algorithm: 'sha512', digests: [''] });
  });
});

describe('a large body with integrity', () => {
  it('is held once: fetch resolves holding about the body, arrayBuffer() leaves about the result', async () => {
    const size = 48 * 1024 * 1024;
    const body = Buffer.alloc(size, 'abcdefghijklmnopqrstuvwxyz0123456789\n');
    const url = await origin(body);
    const { stdout } = await runChild(
      undefined,
      url,
      `${GC_PRELUDE}
       const external = () => { gc(); gc(); return process.memoryUsage().arrayBuffers; };
       const base = external();
       const dispatcher = new ferro.Agent();
       let res = await ferro.fetch(origin, { dispatcher, integrity: 'sha256-${digest('sha256', body)}' });
       const held = external() - base;
       const bytes = await res.arrayBuffer();
       res = null;
       const after = external() - base;
       await dispatcher.close();
       console.log(JSON.stringify({ held, after, length: bytes.byteLength }));`,
    );
    const { held, after, length } = JSON.parse(stdout) as { held: number; after: number; length: number };
    expect(length).toBe(size);
    expect(held).toBeLessThan(size * 1.3);
    expect(after).toBeLessThan(size * 1.3);
  }, 60_000);
});
