// MockAgent: a Dispatcher that answers requests from the interceptors of its mock pools, chosen by
// origin, and sends what no interceptor matches to a real agent when net connect allows it.
import { resolveBodyFactory } from '../handler/replayable-body.js';
import { InvalidArgumentError, UndiciError } from '../core/errors.js';
import { Agent, type AgentOptions } from '../dispatcher/agent.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { DispatcherBase } from '../dispatcher/dispatcher-base.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import { MockCallHistory, kRecordCall, type MockCallHistoryLog } from './mock-call-history.js';
import { MockClient } from './mock-client.js';
import {
  MockDispatcher,
  dispatchToMocks,
  kMockAgentPolicy,
  kMockState,
  type MockAgentPolicy,
  type MockDispatcherState,
  type NetConnectDecision,
} from './mock-dispatcher.js';
import { PendingInterceptorsFormatter } from './mock-errors-format.js';
import type * as Pending from './mock-errors-format.js';
import type { Interceptable } from './mock-interceptor.js';
import { MockPool } from './mock-pool.js';
import { normalizeOrigin } from './mock-request.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { detachedController } from '../handler/detached-controller.js';
import { dispatcherLimits, type WebSocketOptions } from '../websocket/limits.js';
import { eventSourceLimits, type EventSourceOptions } from '../eventsource/eventsource-options.js';

type HostMatcher = string | RegExp | ((host: string) => boolean);
type OriginFunction = (origin: string) => boolean;

function kind(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

export class MockAgent<TMockAgentOptions extends MockAgent.Options = MockAgent.Options> extends DispatcherBase {
  readonly #real: Dispatcher;
  readonly #clientPerOrigin: boolean;
  readonly #ignoreTrailingSlash: boolean;
  readonly #acceptNonStandardSearchParameters: boolean;
  /** Mock dispatchers for exact origins, by normalized origin. */
  readonly #byOrigin = new Map<string, MockDispatcher>();
  /** Mock dispatchers for RegExp and function origins, in the order they were made. */
  readonly #byMatcher: [RegExp | OriginFunction, MockDispatcher][] = [];
  #active = true;
  #netConnect: boolean | HostMatcher[] = true;
  #history: MockCallHistory | undefined;
  #recording = false;
  readonly [kMockAgentPolicy]: MockAgentPolicy;

  /** The real agent's WebSocket limits, as undici's MockAgent reports them. */
  override get webSocketOptions(): WebSocketOptions {
    return dispatcherLimits(this.#real) ?? super.webSocketOptions;
  }

  /** The real agent's EventSource limits, likewise. */
  override get eventSourceOptions(): Required<EventSourceOptions> {
    return eventSourceLimits(this.#real);
  }

  constructor(options?: TMockAgentOptions) {
    super();
    if (options != null && typeof options !== 'object') {
      throw new InvalidArgumentError(`MockAgent options must be an object, got ${kind(options)}`);
    }
    const { agent, ignoreTrailingSlash, acceptNonStandardSearchParameters, enableCallHistory, ...agentOptions } =
      (options ?? {}) as MockAgent.Options;
    if (agent != null && (typeof agent !== 'object' || typeof agent.dispatch !== 'function')) {
      throw new InvalidArgumentError('Argument opts.agent must implement Agent');
    }
    if (enableCallHistory !== undefined && typeof enableCallHistory !== 'boolean') {
      throw new InvalidArgumentError('options.enableCallHistory must to be a boolean'); // undici's words, typo included
    }
    // undici does not check these two; ferro does, in the same words.
    for (const [name, value] of Object.entries({ ignoreTrailingSlash, acceptNonStandardSearchParameters })) {
      if (value !== undefined && typeof value !== 'boolean') throw new InvalidArgumentError(`options.${name} must be a boolean`);
    }
    this.#real = agent ?? new Agent(agentOptions);
    this.#clientPerOrigin = agentOptions.connections === 1;
    this.#ignoreTrailingSlash = ignoreTrailingSlash === true;
    this.#acceptNonStandardSearchParameters = acceptNonStandardSearchParameters === true;
    if (enableCallHistory === true) this.enableCallHistory();
    // Requests that reach the network report their connection events here, as an Agent's do.
    for (const event of ['connect', 'disconnect', 'connectionError', 'drain'] as const) {
      if (typeof this.#real.on !== 'function') break;
      this.#real.on(event, (origin: URL, targets: Dispatcher[] = [], err?: Error) => {
        this.emit(event, origin, [this, ...targets], err);
      });
    }
    const self = this;
    this[kMockAgentPolicy] = {
      get active() {
        return self.#active;
      },
      get real() {
        return self.#real;
      },
      get ignoreTrailingSlash() {
        return self.#ignoreTrailingSlash;
      },
      get acceptNonStandardSearchParameters() {
        return self.#acceptNonStandardSearchParameters;
      },
      netConnect: (origin) => this.#netConnectFor(origin),
      record: (opts) => this.#record(opts),
      states: () => this.#dispatchers().map((d) => d[kMockState]),
      forget: (state) => this.#forget(state),
    };
  }

  /** Whether requests are answered by mocks (true until deactivate()). */
  get isMockActive(): boolean {
    return this.#active;
  }

  // Closing twice (a test and its cleanup) is fine: the real agent closes once.
  protected override get refusesCloseWhenDestroyed(): boolean {
    return false;
  }

  /**
   * The mock dispatcher for `origin` (a MockClient when `connections` is 1, else a MockPool),
   * made on first use; the same one for the same origin. A RegExp or function origin answers for
   * every origin it matches.
   */
  get<TInterceptable extends Interceptable>(origin: string): TInterceptable;
  get<TInterceptable extends Interceptable>(origin: URL): TInterceptable;
  get<TInterceptable extends Interceptable>(origin: RegExp): TInterceptable;
  get<TInterceptable extends Interceptable>(origin: (origin: string) => boolean): TInterceptable;
  get<TInterceptable extends Interceptable>(origin: string | URL | RegExp | OriginFunction): TInterceptable {
    if (typeof origin === 'string' || origin instanceof URL) {
      const key = normalizeOrigin(origin);
      let found = this.#byOrigin.get(key);
      if (found === undefined) {
        found = this.#make(key);
        this.#byOrigin.set(key, found);
      }
      return found as unknown as TInterceptable;
    }
    if (origin instanceof RegExp || typeof origin === 'function') {
      // Two RegExps written alike are the same origin matcher.
      const same = (m: RegExp | OriginFunction): boolean =>
        m === origin ||
        (m instanceof RegExp && origin instanceof RegExp && m.source === origin.source && m.flags === origin.flags);
      let found = this.#byMatcher.find(([m]) => same(m))?.[1];
      if (found === undefined) {
        found = this.#make(origin);
        this.#byMatcher.push([origin, found]);
      }
      return found as unknown as TInterceptable;
    }
    throw new InvalidArgumentError(`get(origin): origin must be a string, a URL, a RegExp or a function, got ${kind(origin)}`);
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    try {
      return this.#dispatch(opts, handler);
    } catch (err) {
      // As undici's agents: a handler that can hear the error hears it; otherwise the call throws.
      const driven = toControllerHandler(handler);
      if (typeof driven.onResponseError !== 'function') throw err;
      driven.onResponseError(detachedController, err as Error);
      return false;
    }
  }

  #dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError('opts must be an object.');
    if (opts.origin == null || opts.origin === '') throw new InvalidArgumentError('opts.origin must be a non-empty string or URL.');
    const refused = this.refusal(opts);
    if (refused !== null) throw refused;
    const origin = normalizeOrigin(opts.origin);
    // A body factory (replayable body) is made into this attempt's body before anything reads it.
    if (typeof opts.body === 'function') opts = { ...opts, body: resolveBodyFactory(opts.body) };
    const log = this.#record(opts);
    if (!this.#active) return this.#real.dispatch(opts, handler);
    const states = this.#dispatchers()
      .map((d) => d[kMockState])
      .filter((s) => s.serves(origin));
    return dispatchToMocks({ origin, states, policy: this[kMockAgentPolicy] }, opts, handler, log);
  }

  /** Turns mocking back on after deactivate(). */
  activate(): void {
    this.#active = true;
  }

  /** Sends every request to the real agent, interceptors untouched, until activate(). */
  deactivate(): void {
    this.#active = false;
  }

  /**
   * Lets requests that no interceptor matches reach the network: all of them (no argument), or
   * those whose host matches; each call adds a matcher. A string without a port matches the host
   * name on any port.
   */
  enableNetConnect(): void;
  enableNetConnect(host: string): void;
  enableNetConnect(host: RegExp): void;
  enableNetConnect(host: (host: string) => boolean): void;
  enableNetConnect(matcher?: HostMatcher): void {
    if (matcher === undefined) {
      this.#netConnect = true;
      return;
    }
    if (typeof matcher !== 'string' && !(matcher instanceof RegExp) && typeof matcher !== 'function') {
      throw new InvalidArgumentError('Unsupported matcher. Must be one of String|Function|RegExp.');
    }
    if (Array.isArray(this.#netConnect)) this.#netConnect.push(matcher);
    else this.#netConnect = [matcher];
  }

  /** Makes every request that no interceptor matches fail with MockNotMatchedError. */
  disableNetConnect(): void {
    this.#netConnect = false;
  }

  /** Records every later request (see getCallHistory()). */
  enableCallHistory(): this {
    this.#recording = true;
    this.#history ??= new MockCallHistory();
    return this;
  }

  /** Stops recording; what was recorded stays readable. */
  disableCallHistory(): this {
    this.#recording = false;
    return this;
  }

  /** The recorded requests, or undefined if call history was never enabled. */
  getCallHistory(): MockCallHistory | undefined {
    return this.#history;
  }

  clearCallHistory(): void {
    this.#history?.clear();
  }

  /** Interceptors not yet used as often as they were registered for (persistent ones: never used). */
  pendingInterceptors(): MockAgent.PendingInterceptor[] {
    return this.#dispatchers().flatMap((d) => {
      const state = d[kMockState];
      return state.dispatches.filter((p) => p.pending).map((p) => ({ ...p, origin: state.label }));
    });
  }

  /** Throws, listing them in a table, when any interceptor is pending. */
  assertNoPendingInterceptors(
    options: { pendingInterceptorsFormatter?: MockAgent.PendingInterceptorsFormatter } = {},
  ): void {
    const pending = this.pendingInterceptors();
    if (pending.length === 0) return;
    const formatter = options?.pendingInterceptorsFormatter ?? new PendingInterceptorsFormatter();
    const count = pending.length === 1 ? '1 interceptor is' : `${pending.length} interceptors are`;
    throw new UndiciError(`${count} pending:\n\n${formatter.format(pending)}`.trim());
  }

  protected onClose(): Promise<void> {
    // Closing a mock agent twice (a test and its cleanup) is fine: the real agent closes once.
    const real = (this.#real as { destroyed?: boolean }).destroyed === true ? undefined : this.#real.close();
    return Promise.all([...this.#dispatchers().map((d) => d.close()), real]).then(() => this.#clear());
  }

  protected onDestroy(err: Error | null): Promise<void> {
    return Promise.all([...this.#dispatchers().map((d) => d.destroy(err)), this.#real.destroy(err)]).then(() => this.#clear());
  }

  #clear(): void {
    this.#history?.clear();
    this.#byOrigin.clear();
    this.#byMatcher.length = 0;
  }

  #make(origin: string | RegExp | OriginFunction): MockDispatcher {
    const options = { agent: this as MockAgent };
    return this.#clientPerOrigin ? new MockClient(origin, options) : new MockPool(origin, options);
  }

  /** Exact-origin dispatchers first, then matcher ones: an exact registration is the more specific. */
  #dispatchers(): MockDispatcher[] {
    return [...this.#byOrigin.values(), ...this.#byMatcher.map(([, d]) => d)];
  }

  #forget(state: MockDispatcherState): void {
    for (const [key, d] of this.#byOrigin) if (d[kMockState] === state) this.#byOrigin.delete(key);
    const at = this.#byMatcher.findIndex(([, d]) => d[kMockState] === state);
    if (at !== -1) this.#byMatcher.splice(at, 1);
  }

  #record(opts: DispatchOptions): MockCallHistoryLog | undefined {
    if (!this.#recording || this.#history === undefined) return undefined;
    try {
      return this.#history[kRecordCall](opts);
    } catch {
      // A request whose URL cannot be built fails on its own; the history just lacks it.
      return undefined;
    }
  }

  #netConnectFor(origin: string): NetConnectDecision {
    const allowed = this.#netConnect;
    if (allowed === true) return 'allowed';
    if (allowed === false) return 'disabled';
    let host = origin;
    let hostname = origin;
    try {
      const url = new URL(origin);
      host = url.host;
      hostname = url.hostname;
    } catch {
      /* matched as written */
    }
    const ok = allowed.some((m) => {
      if (typeof m === 'string') return m === host || m === hostname;
      if (m instanceof RegExp) {
        m.lastIndex = 0;
        return m.test(host);
      }
      return Boolean(m(host));
    });
    return ok ? 'allowed' : 'not-enabled';
  }
}

// Type names as undici spells them, so that code typed against undici's mocks compiles.
export declare namespace MockAgent {
  type PendingInterceptor = Pending.PendingInterceptor;
  type PendingInterceptorsFormatter = Pending.PendingInterceptorsFormat;
  interface Options extends AgentOptions {
    /** The real dispatcher unmatched requests go to; a new Agent with these options when absent. */
    agent?: Dispatcher;
    /** Ignore a trailing slash on paths when matching. */
    ignoreTrailingSlash?: boolean;
    /** Also accept `a[]=1&a[]=2` and `a=1,2` for a=1&a=2 when matching queries. */
    acceptNonStandardSearchParameters?: boolean;
    /** Record calls from the start (see enableCallHistory()). */
    enableCallHistory?: boolean;
  }
}
