// HTTP/2 from the engine, against node:http2 secure servers: negotiation, multiplexing, bodies
// and trailers both ways, flow control under pause, RST_STREAM, GOAWAY, abort, fallback to h1.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, errors } from '../ts/index.js';
import { Cleanup } from './fixtures/h1.js';
import { ca, h2Server } from './fixtures/h2.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('HTTP/2', () => {
  it('serves a request over h2 when ALPN picks it', async () => {
    const srv = cleanup.add(
      await h2Server((stream, headers) => {
        stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-proto': String(headers[':scheme']) });
        stream.end(`hello ${headers[':method']} ${headers[':path']} ${headers[':authority']}`);
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { connect: { ca } }));
    const res = await client.request({ path: '/a?b=1', method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-proto']).toBe('https');
    expect(await res.body.text()).toBe(`hello GET /a?b=1 ${new URL(srv.origin).host}`);
  });
});
