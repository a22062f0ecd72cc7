// RetryHandler as undici's own tests (test/retry-handler*.js, test/interceptors/retry.js) see it:
// the caller's hooks on each attempt, the attempt count in RequestRetryError, the stable
// controller, the request context through other interceptors, and the policy's types.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Client,
  errors,
  interceptors,
  RetryHandler,
  type DispatchController,
  type DispatchHandler,
  type DispatchOptions,
} from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

/** A server answering the n-th request (0-based) with `answers[n]` (the last one repeats). */
async function origin(answers: ((req: IncomingMessage, res: ServerResponse) => void)[]): Promise<string> {
  let n = 0;
  const srv = cleanup.track(await httpServer((req, res) => answers[Math.min(n++, answers.length - 1)]!(req, res)));
  return srv.origin;
}

function client(url: string): Client {
  const c = new Client(url);
  cleanup.push(() => c.destroy());
  return c;
}

interface Seen {
  starts: DispatchController[];
  statuses: number[];
  body: string;
  error: Error | null;
  done: Promise<void>;
}

/** A handler recording what RetryHandler hands it; `done` settles at the end or the error. */
function recorder(): { handler: DispatchHandler; seen: Seen } {
  let finish!: () => void;
  const seen: Seen = { starts: [], statuses: [], body: '', error: null, done: new Promise<void>((r) => (finish = r)) };
  const handler: DispatchHandler = {
    onRequestStart: (controller) => void seen.starts.push(controller),
    onResponseStart: (_c, statusCode) => void seen.statuses.push(statusCode),
    onResponseData: (_c, chunk) => void (seen.body += chunk.toString()),
    onResponseEnd: () => finish(),
    onResponseError: (_c, err) => {
      seen.error = err;
      finish();
    },
  };
  return { handler, seen };
}

const request: DispatchOptions = { method: 'GET', path: '/', headers: { 'content-type': 'application/json' } };

describe('RetryHandler, as undici behaves', () => {
  it("calls the caller's onRequestStart on each attempt until a response head arrives, always with one controller", async () => {
    const url = await origin([
      (req) => req.socket.destroy(),
      (_req, res) => res.writeHead(500).end('failed'),
      (_req, res) => res.writeHead(200).end('hello world!'),
    ]);
    const c = client(url);
    const { handler, seen } = recorder();
    const retries = new RetryHandler(
      { ...request, retryOptions: { retry: (_err, _ctx, done) => void setImmediate(done) } },
      { dispatch: c.dispatch.bind(c), handler },
    );
    c.dispatch(request, retries);
    await seen.done;
    expect(seen.error).toBe(null);
    expect(seen.statuses).toEqual([200]);
    expect(seen.body).toBe('hello world!');
    expect(seen.starts).toHaveLength(3);
    expect(new Set(seen.starts).size).toBe(1);
    expect(seen.starts[0]).toBe(retries.controllerProxy);
  });

  it("counts attempts in RequestRetryError's data: an ETag mismatch on the second is { count: 2 }", async () => {
    const url = await origin([
      (_req, res) => {
        res.writeHead(200, { etag: 'asd', 'content-length': '6' });
        res.write('abc');
        setImmediate(() => res.destroy());
      },
      (_req, res) => res.writeHead(206, { 'content-range': 'bytes 3-5/6', etag: 'erwsd' }).end('def'),
    ]);
    const c = client(url);
    const { handler, seen } = recorder();
    c.dispatch(request, new RetryHandler({ ...request, retryOptions: { minTimeout: 1 } }, { dispatch: c.dispatch.bind(c), handler }));
    await seen.done;
    expect(seen.body).toBe('abc');
    expect(seen.error).toBeInstanceOf(errors.RequestRetryError);
    expect(seen.error!.message).toBe('ETag mismatch');
    expect((seen.error as InstanceType<typeof errors.RequestRetryError>).data).toEqual({ count: 2 });
  });

  it('passes the context of interceptors composed around it (redirect history) on a Client', async () => {
    const url = await origin([(_req, res) => res.end('hello world!')]);
    const composed = client(url).compose(interceptors.redirect({ maxRedirections: 1 }), interceptors.retry());
    const response = await composed.request({ method: 'GET', path: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.context).toEqual({ history: [new URL('/', url)] });
    await response.body.dump();
  });

  it("controllerProxy: inert before an attempt; then reports the attempt's controller paused as it is", () => {
    const retries = new RetryHandler({ ...request, retryOptions: {} }, { dispatch: () => true, handler: {} });
    const proxy = retries.controllerProxy;
    expect([proxy.paused, proxy.aborted, proxy.reason, proxy.rawHeaders, proxy.rawTrailers]).toEqual([false, false, null, null, null]);
    expect(() => {
      proxy.pause();
      proxy.resume();
    }).not.toThrow();
    const calls: string[] = [];
    const attempt: DispatchController = {
      paused: true,
      aborted: false,
      reason: null,
      rawHeaders: null,
      rawTrailers: null,
      pause: () => void calls.push('pause'),
      resume: () => void calls.push('resume'),
      abort: () => void calls.push('abort'),
    };
    retries.onRequestStart(attempt, {});
    expect(proxy.paused).toBe(true);
    proxy.pause();
    proxy.resume();
    expect(calls).toEqual(['pause', 'resume']);
  });

  it("types the policy as undici's types/retry-handler.d.ts does", () => {
    type Context = { state: RetryHandler.RetryState; opts: DispatchOptions & { retryOptions?: RetryHandler.RetryOptions } };
    expectTypeOf<Parameters<RetryHandler.RetryCallback>[0]>().toEqualTypeOf<Error>();
    expectTypeOf<Parameters<RetryHandler.RetryCallback>[1]>().toEqualTypeOf<Context>();
    expectTypeOf<Parameters<RetryHandler.RetryCallback>[2]>().toEqualTypeOf<RetryHandler.OnRetryCallback>();
    expectTypeOf<ReturnType<RetryHandler.RetryCallback>>().toEqualTypeOf<void>();
    expectTypeOf<RetryHandler.RetryState>().toEqualTypeOf<{ counter: number }>();
    expectTypeOf<RetryHandler.OnRetryCallback>().toEqualTypeOf<(result?: Error | null) => void>();
    expectTypeOf<RetryHandler.RetryContext>().toEqualTypeOf<Context>();
    expectTypeOf<NonNullable<RetryHandler.RetryOptions['methods']>>().toEqualTypeOf<DispatchOptions['method'][]>();
    // A policy that returns its timer (as the default one does) still fits.
    const policy: RetryHandler.RetryCallback = (_err, _ctx, cb) => setTimeout(cb, 1);
    expect(typeof policy).toBe('function');
  });
});
