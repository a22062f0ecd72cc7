// Pool: up to `connections` connections to one origin (undici's Pool), served by the engine.
import { InvalidArgumentError } from '../core/errors.js';
import type { UrlObject } from '../core/url.js';
import { EngineDispatcher, type EngineDispatcherOptions } from './engine-dispatcher.js';

export interface PoolOptions extends EngineDispatcherOptions {
  /** Maximum connections; null (the default) for no limit. */
  connections?: number | null;
}

export class Pool extends EngineDispatcher {
  constructor(url: string | URL | UrlObject, options: PoolOptions = {}) {
    const connections = options?.connections ?? 0;
    if (typeof connections !== 'number' || !Number.isInteger(connections) || connections < 0) {
      throw new InvalidArgumentError('invalid connections');
    }
    super(url, options ?? {}, connections);
  }
}
