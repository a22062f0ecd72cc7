// interceptors.responseError against a real local server: status >= 400 rejects with
// errors.ResponseError carrying statusCode, headers and the body (JSON parsed, text otherwise).
import { describe, expect, it } from 'vitest';
import { Agent, errors, interceptors } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

async function setup(opts?: Parameters<typeof interceptors.responseError>[0]) {
  const s = track(
    await httpServer((req, res) => {
      switch (req.url) {
        case '/json':
          res.writeHead(422, { 'content-type': 'application/json; charset=utf-8', 'x-id': '7' });
          return res.end(JSON.stringify({ error: 'bad', fields: ['a'] }));
        case '/problem':
          res.writeHead(400, { 'content-type': 'application/problem+json' });
          return res.end('{"title":"nope"}');
        case '/text':
          res.writeHead(503, { 'content-type': 'text/html' });
          return res.end('<h1>down</h1>');
        case '/broken-json':
          res.writeHead(500, { 'content-type': 'application/json' });
          return res.end('{not json');
        case '/big':
          res.writeHead(500, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ pad: 'x'.repeat(100) }));
        default:
          res.writeHead(201, { 'content-type': 'text/plain' });
          return res.end('created');
      }
    }),
  );
  const agent = track(new Agent().compose(interceptors.responseError(opts)));
  const get = (path: string) =>
    agent.request({ origin: s.origin, path, method: 'GET' }).then(
      (res) => res as unknown as InstanceType<typeof errors.ResponseError>,
      (e: unknown) => e as InstanceType<typeof errors.ResponseError>,
    );
  return { get };
}

describe('responseError', () => {
  it('a JSON error body is parsed; status and headers are on the error', async () => {
    const { get } = await setup();
    const err = await get('/json');
    expect(err).toBeInstanceOf(errors.ResponseError);
    expect(err.code).toBe('UND_ERR_RESPONSE');
    expect(err.statusCode).toBe(422);
    expect(err.headers?.['x-id']).toBe('7');
    expect(err.body).toEqual({ error: 'bad', fields: ['a'] });
    expect(err.bodyTruncated).toBe(false);
  });

  it('+json media types are parsed too', async () => {
    const { get } = await setup();
    expect((await get('/problem')).body).toEqual({ title: 'nope' });
  });

  it('other bodies are text; broken JSON stays text', async () => {
    const { get } = await setup();
    const text = await get('/text');
    expect(text.statusCode).toBe(503);
    expect(text.body).toBe('<h1>down</h1>');
    expect((await get('/broken-json')).body).toBe('{not json');
  });

  it('responses below 400 pass through untouched', async () => {
    const { get } = await setup();
    const res = (await get('/ok')) as unknown as { statusCode: number; body: { text(): Promise<string> } };
    expect(res.statusCode).toBe(201);
    expect(await res.body.text()).toBe('created');
  });

  it('maxSize keeps a prefix of the body and marks it truncated', async () => {
    const { get } = await setup({ maxSize: 10 });
    const err = await get('/big');
    expect(err.bodyTruncated).toBe(true);
    expect(err.body).toBe('{"pad":"xx');
  });

  it('bad options throw InvalidArgumentError when the interceptor is made', () => {
    for (const opts of [{ maxSize: -1 }, { maxSize: 1.5 }, 'opts']) {
      expect(() => interceptors.responseError(opts as never)).toThrow(errors.InvalidArgumentError);
    }
  });
});
