// What MockPool and MockClient are: a dispatcher bound to one origin (or origin matcher) holding
// interceptors. A request that matches one is answered by a replay; one that matches none goes to
// the real network when the agent allows it, and otherwise fails with MockNotMatchedError.
import { ClientDestroyedError, InvalidArgumentError, MockNotMatchedError } from '../core/errors.js';
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { DispatcherBase } from '../dispatcher/dispatcher-base.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import type { DispatchHandler, DispatchOptions } from '../core/types.js';
import type { MockCallHistoryLog } from './mock-call-history.js';
import { hasReplyCallback, MockReplay, produceReply } from './mock-dispatch.js';
import { MockInterceptor, type Interceptable } from './mock-interceptor.js';
import { explainMiss, findMatch, type InterceptorGroup } from './mock-match.js';
import {
  bodyText,
  deferredBodyChunks,
  isDeferredBody,
  normalizeOrigin,
  readDeferredBody,
  requestKey,
} from './mock-request.js';

export type OriginMatcher = string | RegExp | ((origin: string) => boolean);
export type NetConnectDecision = 'allowed' | 'disabled' | 'not-enabled';

/** What a mock dispatcher needs from the agent it belongs to. */
export interface MockAgentPolicy {
  readonly active: boolean;
  readonly real: Dispatcher;
  readonly ignoreTrailingSlash: boolean;
  readonly acceptNonStandardSearchParameters: boolean;
  netConnect(origin: string): NetConnectDecision;
  /** Records the call when call history is on. */
  record(opts: DispatchOptions): MockCallHistoryLog | undefined;
  /** Every mock dispatcher's state on the agent, to explain a miss by other origins' interceptors. */
  states(): readonly MockDispatcherState[];
  forget(state: MockDispatcherState): void;
}

/** The agent-side key through which a mock dispatcher finds its policy. */
export const kMockAgentPolicy = Symbol('ferro.mockAgent.policy');
/** The internal state of a mock dispatcher, for its agent. */
export const kMockState = Symbol('ferro.mockDispatcher.state');

type MockDispatch = MockInterceptor.MockDispatch;

// Used-up interceptors are kept only to say "this would have matched, but was used up".
const USED_UP_KEPT = 64;

function describeOrigin(origin: OriginMatcher | URL): string {
  if (typeof origin === 'string' || origin instanceof URL) return normalizeOrigin(origin);
  if (origin instanceof RegExp) return String(origin);
  return origin.name ? `[function ${origin.name}]` : '[function]';
}

/** A mock dispatcher's interceptors, replies in flight and lifecycle, shared with its agent. */
export class MockDispatcherState {
  readonly matcher: OriginMatcher;
  readonly label: string;
  readonly policy: MockAgentPolicy;
  readonly ignoreTrailingSlash: boolean;
  readonly dispatches: MockDispatch[] = [];
  readonly usedUp: MockDispatch[] = [];
  readonly inflight = new Set<MockReplay>();
  #closeWaiters: (() => void)[] = [];

  constructor(matcher: OriginMatcher, policy: MockAgentPolicy, ignoreTrailingSlash: boolean) {
    this.matcher = matcher;
    this.label = describeOrigin(matcher);
    this.policy = policy;
    this.ignoreTrailingSlash = ignoreTrailingSlash;
  }

  /** Whether requests to `origin` (normalized) are this dispatcher's to answer. */
  serves(origin: string): boolean {
    const m = this.matcher;
    if (typeof m === 'string') return this.label === origin;
    if (m instanceof RegExp) {
      m.lastIndex = 0;
      return m.test(origin);
    }
    return Boolean(m(origin));
  }

  group(): InterceptorGroup {
    return { origin: this.label, active: this.dispatches, usedUp: this.usedUp };
  }

  consume(d: MockDispatch): void {
    d.timesInvoked++;
    const times = d.times ?? 1;
    d.consumed = !d.persist && d.timesInvoked >= times;
    d.pending = d.timesInvoked < times;
    if (!d.consumed) return;
    const at = this.dispatches.indexOf(d);
    if (at !== -1) this.dispatches.splice(at, 1);
    this.usedUp.push(d);
    if (this.usedUp.length > USED_UP_KEPT) this.usedUp.shift();
  }

  /** `started`: the request already began, its body already went through the handler's hooks. */
  replay(
    d: MockDispatch,
    handler: DispatchHandler,
    request: MockInterceptor.MockResponseCallbackOptions,
    started?: MockReplay,
  ): void {
    const error = d.data.error;
    // As undici's: a reply(callback) runs when the request is dispatched (before any delay), so
    // that a synchronous callback giving a bad reply makes dispatch() throw. The request has not
    // started yet; through an agent, the handler hears the error instead.
    const early = started === undefined && !error && hasReplyCallback(d) ? produceReply(d, request) : undefined;
    // A request aborted before its reply is due never reads `early`: its rejection is not unhandled.
    if (early instanceof Promise) early.catch(() => {});
    const onSettled = (r: MockReplay): void => this.#settled(r);
    const replay = started ?? new MockReplay(handler, onSettled);
    replay.attach(onSettled);
    this.inflight.add(replay);
    if (started === undefined) {
      replay.start();
      replay.sent(request.body);
    }
    replay.later(d.delay, () => {
      if (error) return replay.fail(error);
      let produced;
      try {
        produced = early ?? produceReply(d, request);
      } catch (err) {
        return replay.fail(err as Error);
      }
      if (produced instanceof Promise) produced.then((reply) => replay.respond(reply), (err: Error) => replay.fail(err));
      else replay.respond(produced);
    });
  }

  /** Resolves once nothing is in flight. */
  drained(): Promise<void> {
    if (this.inflight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#closeWaiters.push(resolve));
  }

  #settled(replay: MockReplay): void {
    this.inflight.delete(replay);
    if (this.inflight.size === 0 && this.#closeWaiters.length > 0) {
      const waiters = this.#closeWaiters;
      this.#closeWaiters = [];
      for (const w of waiters) w();
    }
  }
}

/** Fails a request that never started, through its handler, as a real dispatcher does. */
export function refuse(handler: DispatchHandler, err: Error): void {
  new MockReplay(handler, () => {}).fail(err);
}

export interface MockRoute {
  /** The request's origin, normalized. */
  origin: string;
  /** The mock dispatchers serving that origin, in the order their interceptors are tried. */
  states: readonly MockDispatcherState[];
  policy: MockAgentPolicy;
}

function serve(
  route: MockRoute,
  opts: DispatchOptions,
  handler: DispatchHandler,
  text: string | undefined,
  callbackBody: unknown,
  started?: MockReplay,
): boolean {
  const { origin, states, policy } = route;
  const key = requestKey(opts, origin, text, policy.acceptNonStandardSearchParameters);
  for (const state of states) {
    const d = findMatch(state.dispatches, key);
    if (d === undefined) continue;
    state.consume(d);
    state.replay(d, handler, {
      ...opts,
      origin: opts.origin == null ? origin : String(opts.origin),
      path: opts.path,
      method: opts.method,
      headers: (key.headersAsGiven ?? {}) as Record<string, string>,
      body: callbackBody as MockInterceptor.MockResponseCallbackOptions['body'],
    }, started);
    return true;
  }
  const decision = policy.netConnect(origin);
  if (decision === 'allowed') {
    const real = opts.origin == null ? { ...opts, origin } : opts;
    return policy.real.dispatch(real, started === undefined ? handler : handedOff(handler, started));
  }
  const others = policy.states().filter((s) => !states.includes(s));
  const { headline, details } = explainMiss(
    key,
    states.map((s) => s.group()),
    others.map((s) => s.group()),
  );
  const why = decision === 'disabled' ? 'net.connect disabled' : 'net.connect is not enabled for this origin';
  const groups = states.map((s) => s.group());
  const remaining = groups.reduce((n, g) => n + g.active.filter((d) => !d.consumed).length, 0);
  const defined = groups.reduce((n, g) => n + g.active.length + g.usedUp.length, 0);
  const counts = `, ${remaining} interceptor(s) remaining out of ${defined} defined`;
  // The first line is undici's, word for word (tests match on it); the lines after it explain the miss.
  throw new MockNotMatchedError(
    `${headline}: subsequent request to origin ${origin} was not allowed (${why})${counts}\n${details}`,
  );
}

/**
 * The handler of a request whose start and body hooks already ran on `started`, going on to the
 * network: those hooks are not heard twice, and the real controller answers through `started`.
 */
function handedOff(handler: DispatchHandler, started: MockReplay): DispatchHandler {
  return {
    onRequestStart: (controller) => started.forwardTo(controller),
    onRequestUpgrade: handler.onRequestUpgrade?.bind(handler),
    onResponseStart: handler.onResponseStart?.bind(handler),
    onResponseData: handler.onResponseData?.bind(handler),
    onResponseEnd: handler.onResponseEnd?.bind(handler),
    onResponseError: handler.onResponseError?.bind(handler),
  };
}

/**
 * undici's order when the handler has body hooks: onRequestStart, onBodySent per chunk as the
 * body is read (an abort stops the reading), onRequestSent, then the reply, whose callbacks get
 * the chunks again as an async iterable of Buffers. The body is matched once wholly read.
 */
async function serveAfterBodyHooks(
  route: MockRoute,
  opts: DispatchOptions,
  handler: DispatchHandler,
  log: MockCallHistoryLog | undefined,
  replay: MockReplay,
): Promise<void> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of deferredBodyChunks(opts.body)) {
      if (replay.done) return;
      chunks.push(chunk);
      if (!replay.hook(() => handler.onBodySent?.(chunk))) return;
    }
  } catch (err) {
    replay.fail(err as Error);
    return;
  }
  if (!replay.hook(() => handler.onRequestSent?.())) return;
  const buf = Buffer.concat(chunks);
  const text = buf.toString('utf8');
  if (log !== undefined) log.body = text;
  const replayed = {
    async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
      yield* chunks;
    },
  };
  try {
    serve(route, { ...opts, body: buf }, handler, text, replayed, replay);
  } catch (err) {
    replay.fail(err as Error);
  }
}

/**
 * Answers a request from the interceptors of `route.states`. A miss throws synchronously, as
 * undici's mocks do; a streamed body is read first, and then a miss reaches the handler instead.
 */
export function dispatchToMocks(
  route: MockRoute,
  opts: DispatchOptions,
  handler: DispatchHandler,
  log: MockCallHistoryLog | undefined,
): boolean {
  handler = toControllerHandler(handler);
  if (!isDeferredBody(opts.body)) return serve(route, opts, handler, bodyText(opts.body), opts.body);
  if (typeof handler.onBodySent === 'function' || typeof handler.onRequestSent === 'function') {
    const replay = new MockReplay(handler, () => {});
    replay.start();
    if (!replay.done) void serveAfterBodyHooks(route, opts, handler, log, replay);
    return true;
  }
  readDeferredBody(opts.body).then(
    (buf) => {
      const text = buf.toString('utf8');
      if (log !== undefined) log.body = text;
      try {
        // The stream is spent: what falls through to the network carries the bytes read.
        serve(route, { ...opts, body: buf }, handler, text, text);
      } catch (err) {
        refuse(handler, err as Error);
      }
    },
    (err: Error) => refuse(handler, err),
  );
  return true;
}

/** For a mock dispatcher made with a plain dispatcher as its agent: always mock, fall through to it. */
function standalonePolicy(agent: Dispatcher): MockAgentPolicy {
  return {
    active: true,
    real: agent,
    ignoreTrailingSlash: false,
    acceptNonStandardSearchParameters: false,
    netConnect: () => 'allowed',
    record: () => undefined,
    states: () => [],
    forget: () => {},
  };
}

export interface MockDispatcherOptions {
  /** The MockAgent this dispatcher belongs to. */
  agent: Dispatcher;
  /** Default for the interceptors' ignoreTrailingSlash; the agent's setting when absent. */
  ignoreTrailingSlash?: boolean;
}

/** The shared implementation of MockPool and MockClient. */
export abstract class MockDispatcher extends DispatcherBase implements Interceptable {
  readonly [kMockState]: MockDispatcherState;

  protected constructor(origin: OriginMatcher | URL, options: MockDispatcherOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError('mock dispatcher options must be an object with an agent');
    }
    const agent = options.agent as Dispatcher & { [kMockAgentPolicy]?: MockAgentPolicy };
    if (agent == null || typeof agent.dispatch !== 'function') {
      throw new InvalidArgumentError('options.agent must be a MockAgent (an object with a dispatch method)');
    }
    if (
      typeof origin !== 'string' &&
      !(origin instanceof URL) &&
      !(origin instanceof RegExp) &&
      typeof origin !== 'function'
    ) {
      throw new InvalidArgumentError(`origin must be a string, a URL, a RegExp or a function, got ${typeof origin}`);
    }
    if (options.ignoreTrailingSlash !== undefined && typeof options.ignoreTrailingSlash !== 'boolean') {
      throw new InvalidArgumentError('options.ignoreTrailingSlash must be a boolean');
    }
    const policy = agent[kMockAgentPolicy] ?? standalonePolicy(agent);
    const matcher = origin instanceof URL ? normalizeOrigin(origin) : origin;
    this[kMockState] = new MockDispatcherState(matcher, policy, options.ignoreTrailingSlash ?? policy.ignoreTrailingSlash);
  }

  // Closing twice (a test and its cleanup) is fine.
  protected override get refusesCloseWhenDestroyed(): boolean {
    return false;
  }

  /** Registers a route for requests to this origin; finish it with reply() or replyWithError(). */
  intercept(options: MockInterceptor.Options): MockInterceptor {
    const state = this[kMockState];
    const withDefaults =
      options !== null && typeof options === 'object' && options.ignoreTrailingSlash === undefined
        ? { ...options, ignoreTrailingSlash: state.ignoreTrailingSlash }
        : options;
    return new MockInterceptor(withDefaults, state.dispatches);
  }

  /** Removes every registered route. */
  cleanMocks(): void {
    const state = this[kMockState];
    state.dispatches.length = 0;
    state.usedUp.length = 0;
  }

  dispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
    this.checkHandler(handler);
    handler = toControllerHandler(handler);
    const state = this[kMockState];
    const refused = this.refusal(opts);
    if (refused !== null) {
      refuse(handler, refused);
      return false;
    }
    // Bound to one origin, this dispatcher answers for it whatever opts.origin says.
    const origin =
      typeof state.matcher === 'string' || opts.origin == null ? state.label : normalizeOrigin(opts.origin);
    const routed = opts.origin == null ? { ...opts, origin } : opts;
    const log = state.policy.record(routed);
    if (!state.policy.active) return state.policy.real.dispatch(routed, handler);
    return dispatchToMocks({ origin, states: [state], policy: state.policy }, routed, handler, log);
  }

  protected onClose(): Promise<void> {
    const state = this[kMockState];
    return state.drained().then(() => state.policy.forget(state));
  }

  protected onDestroy(given: Error | null): Promise<void> {
    const err = given ?? new ClientDestroyedError();
    const state = this[kMockState];
    const pending = [...state.inflight];
    // In-flight replies fail asynchronously, as requests on a destroyed real dispatcher do.
    return Promise.resolve().then(() => {
      for (const replay of pending) replay.fail(err);
      state.policy.forget(state);
    });
  }
}
