// The errors users branch on when a peer closes the connection, as undici shapes them (issue 35
// item 4): a keep-alive response cut short is SocketError 'other side closed' (still an error,
// never a short success), and so is the close of an idle connection in 'disconnect'.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Client, errors } from '../ts/index.js';
import { Cleanup, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A client on a server that answers the first request with `bytes` and then closes. */
async function closingAfter(bytes: string) {
  const srv = cleanup.add(await scriptServer((req) => req.conn.socket.end(bytes, 'latin1')));
  return cleanup.add(new Client(srv.origin));
}

describe('a response body cut short by the peer', () => {
  it('keep-alive response: SocketError "other side closed"', async () => {
    const client = await closingAfter('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    const res = await client.request({ path: '/', method: 'GET' });
    const err = await res.body.text().then(
      (t) => new Error(`short success: ${t}`),
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ constructor: errors.SocketError, name: 'SocketError', code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });

  it('HTTP/1.0 keep-alive response: the same', async () => {
    const client = await closingAfter('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 10\r\n\r\nabc');
    const res = await client.request({ path: '/', method: 'GET' });
    await expect(res.body.text()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });

  it('a response that said `connection: close`: ResponseContentLengthMismatchError, as undici\'s parser reports it', async () => {
    const client = await closingAfter('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nabc');
    const res = await client.request({ path: '/', method: 'GET' });
    await expect(res.body.text()).rejects.toMatchObject({ code: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' });
  });
});

describe('the peer closing an idle connection', () => {
  it("'disconnect' carries SocketError \"other side closed\", not InformationalError", async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 'latin1')),
    );
    const client = cleanup.add(new Client(srv.origin));
    const disconnected = once(client, 'disconnect');
    const res = await client.request({ path: '/', method: 'GET' });
    expect(await res.body.text()).toBe('ok');
    const [, , err] = await disconnected;
    expect(err).toMatchObject({ constructor: errors.SocketError, code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });
});
