// A redirect whose request body cannot be sent again (a stream or iterable a hop took, a
// pipeline's live request side) ends the chain: the caller gets that 3xx, as in undici (issue 35
// item 8). A body that a 303 or a POST 301/302 drops does not stop the chain.
import { describe, expect, it } from 'vitest';
import { Readable, Writable } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, Client, Dispatcher, Pool, interceptors } from '../ts/index.js';
import type { DispatchHandler, DispatchOptions } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

/**
 * `/<code>/<n>` answers `code` with a Location to `/<code>/<n + 1>` until n reaches 5, then 200
 * with the method, path and request body. Every request's body is read first.
 */
async function redirectingServer() {
  const bodies: string[] = [];
  const s = await httpServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      const [code = '302', hops = '0'] = req.url!.slice(1).split('/');
      const n = Number(hops);
      if (n >= 5) {
        res.end(`${req.method} ${req.url} ${body}`);
        return;
      }
      res.writeHead(Number(code), { location: `/${code}/${n + 1}`, connection: 'close' });
      res.end();
    });
  });
  return Object.assign(track(s), { bodies });
}

const dispatchers = {
  Agent: () => new Agent(),
  Pool: (origin: string) => new Pool(origin),
  Client: (origin: string) => new Client(origin),
};

for (const [name, make] of Object.entries(dispatchers)) {
  describe(`redirect with a one-shot body (${name})`, () => {
    const following = (origin: string) => track(make(origin)).compose(interceptors.redirect({ maxRedirections: 10 }));

    const oneShot: Record<string, () => unknown> = {
      'a Readable': () => Readable.from([Buffer.from('REQUEST')]),
      'a ReadableStream': () =>
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode('REQUEST'));
            controller.close();
          },
        }),
      'an async iterable': () =>
        (async function* () {
          yield 'REQUEST';
        })(),
    };

    for (const [kind, body] of Object.entries(oneShot)) {
      it(`${kind} PUT answered 301: the 301 is the response, nothing is sent twice`, async () => {
        const s = await redirectingServer();
        const res = await following(s.origin).request({ origin: s.origin, path: '/301', method: 'PUT', body: body() as never });
        expect(res.statusCode).toBe(301);
        expect(res.headers.location).toBe('/301/1');
        expect(await res.body.text()).toBe('');
        expect(s.bodies).toEqual(['REQUEST']);
      });
    }

    it('a Readable POST answered 301 is followed as a GET without the body', async () => {
      const s = await redirectingServer();
      const res = await following(s.origin).request({
        origin: s.origin,
        path: '/301',
        method: 'POST',
        body: Readable.from([Buffer.from('REQUEST')]),
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('GET /301/5 ');
    });
  });
}

describe('redirect with a one-shot body: limits and other APIs', () => {
  it('throwOnMaxRedirect does not turn an unreplayable 307 into MaxRedirectsError', async () => {
    const s = await redirectingServer();
    const dispatcher = track(new Agent()).compose(interceptors.redirect({ maxRedirections: 1, throwOnMaxRedirect: true }));
    const res = await dispatcher.request({ origin: s.origin, path: '/307/1', method: 'PUT', body: Readable.from(['x']) });
    expect(res.statusCode).toBe(307);
    await res.body.dump();
  });

  it('stream(): the factory gets the 307 of a Readable body', async () => {
    const s = await redirectingServer();
    const dispatcher = track(new Agent()).compose(interceptors.redirect({ maxRedirections: 10 }));
    const seen: string[] = [];
    const written: string[] = [];
    await dispatcher.stream({ origin: s.origin, path: '/307', method: 'POST', body: Readable.from(['REQUEST']) }, ({ statusCode, headers }) => {
      seen.push(`${statusCode} ${String(headers.location)}`);
      return new Writable({
        write(chunk: Buffer, _e, done) {
          written.push(chunk.toString());
          done();
        },
      });
    });
    expect(seen).toEqual(['307 /307/1']);
    expect(written).toEqual([]);
  });

  it('pipeline() hands its first 302 to the handler (its request side cannot be replayed)', async () => {
    const s = await redirectingServer();
    const dispatcher = track(new Client(s.origin)).compose(interceptors.redirect({ maxRedirections: 1 }));
    const seen: string[] = [];
    const out: string[] = [];
    await streamPipeline(
      Readable.from(['REQUEST']),
      dispatcher.pipeline({ path: '/302', method: 'PUT' }, ({ statusCode, headers, body }) => {
        seen.push(`${statusCode} ${String(headers.location)}`);
        return body;
      }),
      new Writable({
        write(chunk: Buffer, _e, done) {
          out.push(chunk.toString());
          done();
        },
      }),
    );
    expect(seen).toEqual(['302 /302/1']);
    expect(out).toEqual([]);
  });

  it('pipeline(): a 302 that comes before its body was read is not followed either', async () => {
    // A dispatcher answering every request at once with a 302, before anything reads the body.
    class Redirecting extends Dispatcher {
      override dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
        const n = Number(opts.path.split('/').pop()) + 1;
        const controller = { resume() {}, pause() {}, abort() {}, paused: false, aborted: false, reason: null, rawHeaders: null, rawTrailers: null };
        handler.onRequestStart?.(controller, {});
        handler.onResponseStart?.(controller, 302, { location: `http://localhost/302/${n}` }, '');
        handler.onResponseEnd?.(controller, {});
        return true;
      }
      override async close(): Promise<void> {}
      override async destroy(): Promise<void> {}
    }
    const seen: string[] = [];
    await streamPipeline(
      Readable.from(['REQUEST']),
      new Redirecting()
        .compose(interceptors.redirect({ maxRedirections: 1 }))
        .pipeline({ origin: 'http://localhost', path: '/302/1', method: 'GET' }, ({ statusCode, headers, body }) => {
          seen.push(`${statusCode} ${String(headers.location)}`);
          return body;
        }),
      new Writable({ write: (_c, _e, done) => done() }),
    );
    expect(seen).toEqual(['302 http://localhost/302/2']);
  });
});
