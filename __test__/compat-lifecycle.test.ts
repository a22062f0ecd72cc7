// Lifecycle errors and upgrade answers as undici gives them (issue 11, items 9 and 10).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Client, Dispatcher, Pool, errors } from '../ts/index.js';
import { Cleanup, scriptServer } from './fixtures/h1.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('close and destroy', () => {
  for (const [name, make] of [
    ['Client', () => new Client('http://127.0.0.1:1')],
    ['Pool', () => new Pool('http://127.0.0.1:1')],
    ['Agent', () => new Agent()],
  ] as const) {
    it(`${name}: close() after destroy() or after a finished close() → ClientDestroyedError`, async () => {
      const a = make();
      await a.destroy();
      await expect(a.close()).rejects.toBeInstanceOf(errors.ClientDestroyedError);
      const err = await new Promise<Error | null>((resolve) => a.close((e) => resolve(e)));
      expect(err).toBeInstanceOf(errors.ClientDestroyedError);
      const b = make();
      await b.close();
      await expect(b.close()).rejects.toBeInstanceOf(errors.ClientDestroyedError);
      // destroy() after close() is fine.
      await expect(b.destroy()).resolves.toBeUndefined();
    });
  }

  it('a closed Agent refuses requests with ClientDestroyedError, as undici', async () => {
    const agent = new Agent();
    await agent.close();
    await expect(agent.request({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET' })).rejects.toBeInstanceOf(
      errors.ClientDestroyedError,
    );
  });

  it('callback arguments are checked', () => {
    const client = cleanup.add(new Client('http://127.0.0.1:1'));
    expect(() => client.close(5 as never)).toThrow(new errors.InvalidArgumentError('invalid callback'));
    expect(() => client.destroy(null, 5 as never)).toThrow(new errors.InvalidArgumentError('invalid callback'));
    const agent = cleanup.add(new Agent());
    expect(() => agent.close(5 as never)).toThrow(new errors.InvalidArgumentError('invalid callback'));
  });
});

describe('the base Dispatcher', () => {
  it('has dispatch / close / destroy that throw "not implemented"', () => {
    const Base = Dispatcher as unknown as new () => Dispatcher;
    const d = new Base();
    expect(() => d.dispatch({ path: '/', method: 'GET' }, {})).toThrow('not implemented');
    expect(() => d.close()).toThrow('not implemented');
    expect(() => d.destroy()).toThrow('not implemented');
  });
});

describe('upgrade answers', () => {
  it('a 101 without an upgrade header fails with SocketError "bad upgrade"', async () => {
    const srv = cleanup.add(await scriptServer((req) => req.conn.socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n')));
    const client = cleanup.add(new Client(srv.origin));
    const err = await client.upgrade({ path: '/' }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(errors.SocketError);
    expect(err!.message).toBe('bad upgrade');
  });

  it('a 101 naming the protocol succeeds', async () => {
    const srv = cleanup.add(
      await scriptServer((req) => req.conn.socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n')),
    );
    const client = cleanup.add(new Client(srv.origin));
    const { headers, socket } = await client.upgrade({ path: '/', protocol: 'websocket' });
    expect(headers.upgrade).toBe('websocket');
    socket.destroy();
  });
});
