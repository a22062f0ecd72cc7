// MockClient: what MockAgent hands out instead of a MockPool when `connections` is 1 (undici's MockClient).
import type { ClientOptions } from '../dispatcher/client.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { MockDispatcher, type OriginMatcher } from './mock-dispatcher.js';

export class MockClient extends MockDispatcher {
  // Like MockPool, not an engine Client underneath: see mock-pool.ts.
  constructor(origin: OriginMatcher | URL, options: MockClient.Options) {
    super(origin, options);
  }
}

export declare namespace MockClient {
  interface Options extends ClientOptions {
    /** The agent this client belongs to (a MockAgent). */
    agent: Dispatcher;
    /** Default for the interceptors' ignoreTrailingSlash; the agent's setting when absent. */
    ignoreTrailingSlash?: boolean;
  }
}
