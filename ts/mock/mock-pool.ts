// MockPool: the mock dispatcher MockAgent hands out for an origin (undici's MockPool).
import type { PoolOptions } from '../dispatcher/pool.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { MockDispatcher, type OriginMatcher } from './mock-dispatcher.js';

export class MockPool extends MockDispatcher {
  // Not an engine Pool underneath: a mock must work for any origin, https included, without
  // opening anything; requests that fall through go to the agent's real dispatcher.
  constructor(origin: OriginMatcher | URL, options: MockPool.Options) {
    super(origin, options);
  }
}

export declare namespace MockPool {
  interface Options extends PoolOptions {
    /** The agent this pool belongs to (a MockAgent). */
    agent: Dispatcher;
    /** Default for the interceptors' ignoreTrailingSlash; the agent's setting when absent. */
    ignoreTrailingSlash?: boolean;
  }
}
