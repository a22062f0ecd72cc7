// The Redis / Valkey connection a RedisCacheStore talks through: the few client methods it needs
// (iovalkey's and ioredis's clients both have them), loading iovalkey for a `url`, and bounding
// every command in time so that a server that is down or slow costs a miss, never a wait.
import { createRequire } from 'node:module';
import { NotSupportedError } from '../core/errors.js';

type Arg = string | Buffer | number;

/** What the store needs of a client; an iovalkey or ioredis client satisfies it. */
export interface RedisClientLike {
  readonly status: string;
  call(...args: [command: string, ...args: Arg[]]): Promise<unknown>;
  callBuffer(...args: [command: string, ...args: Arg[]]): Promise<unknown>;
  multi(commands: Arg[][]): { exec(): Promise<[Error | null, unknown][] | null> };
  on(event: 'error' | 'ready', listener: (err: Error) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}

type ClientClass = new (url: string, options: Record<string, unknown>) => RedisClientLike;

/** A client for `url` from the optional iovalkey package; NotSupportedError when it is not installed. */
export function connectTo(url: string, commandTimeout: number): RedisClientLike {
  let mod: ClientClass & { default?: ClientClass };
  try {
    mod = createRequire(import.meta.url)('iovalkey') as ClientClass & { default?: ClientClass };
  } catch (err) {
    throw new NotSupportedError(
      `RedisCacheStore with a url needs the iovalkey package (npm install iovalkey), or pass an existing client as { client }: ${(err as Error).message}`,
    );
  }
  const Client = mod.default ?? mod;
  return new Client(url, {
    commandTimeout,
    // A command caught by a lost connection fails at once instead of waiting for reconnects.
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(commandTimeout, 1000),
  });
}

class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

/**
 * Issues commands when the connection can answer them: on a ready connection, or (queued by the
 * client) before the first connection is made. Once a ready connection was lost, commands fail
 * at once until it is back, so requests go to the origin instead of queueing behind reconnects.
 */
export class RedisLink {
  readonly client: RedisClientLike;
  readonly #timeout: number;
  #wasReady = false;

  constructor(client: RedisClientLike, timeout: number) {
    this.client = client;
    this.#timeout = timeout;
    client.on('ready', () => {
      this.#wasReady = true;
    });
  }

  usable(): boolean {
    const status = this.client.status;
    if (status === 'ready') {
      this.#wasReady = true;
      return true;
    }
    return !this.#wasReady && (status === 'wait' || status === 'connecting' || status === 'connect');
  }

  /** Throws when the server cannot be reached now. */
  check(): void {
    if (!this.usable()) throw new RedisUnavailableError(`Redis is unavailable (connection ${this.client.status})`);
  }

  /** `op` (already issued) bounded by the command timeout. */
  bounded<T>(op: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer within ${this.#timeout} ms`)), this.#timeout);
      timer.unref();
    });
    return Promise.race([op, expired]).then(
      (reply) => {
        clearTimeout(timer);
        return reply;
      },
      (err: Error) => {
        clearTimeout(timer);
        // The client's word for a command cut off by a lost connection names an option, not the cause.
        throw err.name === 'MaxRetriesPerRequestError' ? new RedisUnavailableError('Redis is unavailable (connection lost)') : err;
      },
    );
  }

  call(...args: [string, ...Arg[]]): Promise<unknown> {
    this.check();
    return this.bounded(this.client.call(...args));
  }

  callBuffer(...args: [string, ...Arg[]]): Promise<unknown> {
    this.check();
    return this.bounded(this.client.callBuffer(...args));
  }

  /** A MULTI / EXEC transaction; rejects with the first failed command's error. */
  async transaction(commands: Arg[][]): Promise<unknown[]> {
    this.check();
    const replies = await this.bounded(this.client.multi(commands).exec());
    if (replies === null) throw new Error('Redis transaction was aborted');
    return replies.map(([err, reply]) => {
      if (err !== null) throw err;
      return reply;
    });
  }
}
