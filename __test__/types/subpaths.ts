// The `ferro/types/<name>` subpaths that code written for undici imports (undici's types/*.d.ts
// module names): each resolves, and its default / named exports are ferro's own declarations.
import Agent from 'ferro/types/agent';
import BalancedPool from 'ferro/types/balanced-pool';
import CacheHandler from 'ferro/types/cache-interceptor';
import Client from 'ferro/types/client';
import buildConnector from 'ferro/types/connector';
import Dispatcher from 'ferro/types/dispatcher';
import EnvHttpProxyAgent from 'ferro/types/env-http-proxy-agent';
import Errors from 'ferro/types/errors';
import Interceptors from 'ferro/types/interceptors';
import MockAgent from 'ferro/types/mock-agent';
import MockErrors from 'ferro/types/mock-errors';
import Pool from 'ferro/types/pool';
import type PoolStats from 'ferro/types/pool-stats';
import ProxyAgent from 'ferro/types/proxy-agent';
import BodyReadable from 'ferro/types/readable';
import RetryAgent from 'ferro/types/retry-agent';
import RetryHandler from 'ferro/types/retry-handler';
import { request, stream } from 'ferro/types/api';
import { fetch, Headers, type RequestInit } from 'ferro/types/fetch';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'ferro/types/header';
import { MockInterceptor, type MockScope } from 'ferro/types/mock-interceptor';
import { SnapshotAgent, SnapshotRecorder } from 'ferro/types/snapshot-agent';
import { util } from 'ferro/types/util';
import { WebSocket, WebSocketStream } from 'ferro/types/websocket';
import * as Root from 'ferro/types';
import * as Ferro from 'ferro';

// The subpath's default is the root's class, not a look-alike.
export const sameClient: typeof Ferro.Client = Client;
export const samePool: typeof Ferro.Pool = Pool;
export const sameAgent: typeof Ferro.Agent = Agent;
export const sameRoot: typeof Ferro.Dispatcher = Root.Dispatcher;
export const classes = [BalancedPool, EnvHttpProxyAgent, MockAgent, ProxyAgent, RetryAgent, RetryHandler, BodyReadable, SnapshotAgent, SnapshotRecorder, WebSocket, WebSocketStream, MockInterceptor] as const;
export const functions = [buildConnector, request, stream, fetch, util.parseHeaders] as const;
export const headers = new Headers();

// Namespaces used in type positions, as undici's tests do.
export function isUndiciError(e: unknown): e is Errors.UndiciError {
  return e instanceof Errors.UndiciError;
}
export const mockErrorClass: typeof Ferro.mockErrors = MockErrors;
export const dns: Interceptors.DNSInterceptorOpts = { maxTTL: 1000 };
export const redirect: Interceptors.RedirectInterceptorOpts = { maxRedirections: 2 };
export const cacheOpts: CacheHandler.CacheOptions = {};
export type Store = CacheHandler.CacheStore;
export type Stats = PoolStats;
export type Dispatch = MockInterceptor.MockDispatch;
export type Scope = MockScope;
export const clientOptions: Client.Options = { pipelining: 1 };
export const dispatchOptions: Dispatcher.DispatchOptions = { path: '/', method: 'GET' };
export const incoming: IncomingHttpHeaders = { a: ['1', '2'] };
export const outgoing: OutgoingHttpHeaders = { 'content-length': 3 };
export const init: RequestInit = { method: 'POST' };

// @ts-expect-error a subpath undici does not have does not resolve
import type Nope from 'ferro/types/not-a-module';
export type NopeType = Nope;
// @ts-expect-error the namespace's option types are checked, not `any`
export const badRedirect: Interceptors.RedirectInterceptorOpts = { maxRedirections: 'two' };
