// The errors users branch on when a peer closes the connection, as undici shapes them (issue 35
// item 4): a keep-alive response cut short is SocketError 'other side closed' (still an error,
// never a short success), and so is the close of an idle connection in 'disconnect'. A SocketError
// names the connection in `socket` (addresses, ports, family, byte counts), as undici's does.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { Client, errors, H2CClient } from '../ts/index.js';
import { constants } from 'node:http2';
import { Cleanup, scriptServer } from './fixtures/h1.js';
import { ca, h2Server } from './fixtures/h2.js';
import { rawServer } from './fixtures/servers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A client on a server that answers the first request with `bytes` and then closes. */
async function closingAfter(bytes: string) {
  const { srv } = await answeringOnce(bytes);
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

/** A server that answers the first request with `bytes` and closes, noting the client's port. */
async function answeringOnce(bytes: string) {
  const ports: number[] = [];
  const srv = cleanup.add(
    await scriptServer((req) => {
      ports.push(req.conn.socket.remotePort!);
      req.conn.socket.end(bytes, 'latin1');
    }),
  );
  return { srv, ports };
}

/** What undici's SocketError.socket says about a connection, as the server saw it. */
function socketAsServerSaw(clientPort: number, port: number, sent: string, received: string) {
  return {
    localAddress: '127.0.0.1',
    localPort: clientPort,
    remoteAddress: '127.0.0.1',
    remotePort: port,
    remoteFamily: 'IPv4',
    timeout: undefined,
    bytesWritten: Buffer.byteLength(received, 'latin1'),
    bytesRead: Buffer.byteLength(sent, 'latin1'),
  };
}

describe('SocketError.socket describes the connection', () => {
  it('a request failed by the peer: addresses, ports, family and byte counts', async () => {
    const partial = 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc';
    const { srv, ports } = await answeringOnce(partial);
    const client = cleanup.add(new Client(srv.origin));
    const res = await client.request({ path: '/x', method: 'POST', body: 'hello' });
    const err = (await res.body.text().catch((e: unknown) => e)) as InstanceType<typeof errors.SocketError>;
    expect(err).toBeInstanceOf(errors.SocketError);
    const req = srv.requests[0]!;
    expect(err.socket).toEqual(socketAsServerSaw(ports[0]!, srv.port, partial, req.head + req.body));
    expect(Object.keys(err.socket!)).toContain('timeout');
  });

  it("'disconnect' for an idle connection the peer closed", async () => {
    const answer = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
    const { srv, ports } = await answeringOnce(answer);
    const client = cleanup.add(new Client(srv.origin));
    const disconnected = once(client, 'disconnect');
    const res = await client.request({ path: '/', method: 'GET' });
    await res.body.text();
    const [, , err] = (await disconnected) as [URL, unknown, InstanceType<typeof errors.SocketError>];
    const req = srv.requests[0]!;
    expect(err.socket).toEqual(socketAsServerSaw(ports[0]!, srv.port, answer, req.head));
  });

  it('an HTTP/2 stream the server reset: the session\'s connection, with byte counts', async () => {
    const clientPorts: number[] = [];
    const srv = cleanup.add(
      await h2Server((stream) => {
        clientPorts.push(stream.session!.socket.remotePort!);
        stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      }),
    );
    const client = cleanup.add(new Client(srv.origin, { allowH2: true, connect: { ca } }));
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: unknown) => e)) as InstanceType<
      typeof errors.SocketError
    >;
    expect(err).toBeInstanceOf(errors.SocketError);
    const { bytesWritten, bytesRead, ...where } = err.socket!;
    expect(where).toEqual({
      localAddress: '127.0.0.1',
      localPort: clientPorts[0],
      remoteAddress: '127.0.0.1',
      remotePort: Number(new URL(srv.origin).port),
      remoteFamily: 'IPv4',
      timeout: undefined,
    });
    expect(bytesWritten).toBeGreaterThan(0);
    expect(bytesRead).toBeGreaterThan(0);
  });
});

describe('an h2c server that closes without speaking HTTP/2', () => {
  // undici's h2 client sees the socket end: SocketError 'other side closed' (client-h2's onHttp2SocketEnd).
  it.each([
    ['at once', (socket: Socket) => socket.end()],
    ['after reading the preface', (socket: Socket) => socket.once('data', () => socket.end())],
  ])('%s: SocketError "other side closed"', async (_, onSocket) => {
    const srv = cleanup.add(await rawServer(onSocket));
    const client = cleanup.add(new H2CClient(srv.origin));
    const err = await client.request({ path: '/', method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(err).toMatchObject({ code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });
});
