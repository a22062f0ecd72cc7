// A connection the OS refuses fails with Node's own `net` error shape, as undici passes Node's
// through: code, errno, syscall, and the address and port tried (code that tells upstreams apart,
// such as undici's BalancedPool tests, reads `err.port`).
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { Client, errors, fetch } from '../ts/index.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();

/** A loopback port nothing listens on (it was just closed). */
async function refusedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** What Node's `net.connect` fails with for the same port: the reference. */
async function nodeRefusal(port: number): Promise<Record<string, unknown>> {
  const sock = connect(port, '127.0.0.1');
  const [err] = (await once(sock, 'error').catch((e: unknown) => [e])) as [NodeJS.ErrnoException];
  return { ...err, message: err.message };
}

describe('a refused connection', () => {
  it('fails the request with the error net.connect gives (message, code, errno, syscall, address, port)', async () => {
    const port = await refusedPort();
    const expected = await nodeRefusal(port);
    expect(expected).toMatchObject({ code: 'ECONNREFUSED', address: '127.0.0.1', port });
    const client = cleanup.track(new Client(`http://127.0.0.1:${port}`));
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: unknown) => e)) as NodeJS.ErrnoException;
    expect({ ...err, message: err.message }).toEqual(expected);
  });

  it("emits 'connectionError' with the same fields", async () => {
    const port = await refusedPort();
    const client = cleanup.track(new Client(`http://127.0.0.1:${port}`));
    const event = once(client, 'connectionError');
    await client.request({ path: '/', method: 'GET' }).catch(() => {});
    const [, , err] = (await event) as [URL, unknown, NodeJS.ErrnoException & { port?: number }];
    expect(err).toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port });
    expect(err).not.toBeInstanceOf(errors.UndiciError);
  });

  it("is fetch's TypeError cause, with the address", async () => {
    const port = await refusedPort();
    const err = (await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as TypeError;
    expect(err).toBeInstanceOf(TypeError);
    expect(err.cause).toMatchObject({ code: 'ECONNREFUSED', address: '127.0.0.1', port });
  });
});
