// Public exports, named as in undici so that code switches by changing the import.
import * as errorClasses from './core/errors.js';

export { Dispatcher, ComposedDispatcher } from './dispatcher/dispatcher.js';
export { Client, type ClientOptions } from './dispatcher/client.js';
export { Pool, type PoolOptions } from './dispatcher/pool.js';
export { Agent, type AgentOptions } from './dispatcher/agent.js';
export { BodyReadable } from './api/body.js';
export type * from './dispatcher/types.js';
export const errors = errorClasses.errors;
export { MockAgent } from './mock/mock-agent.js';
export { MockPool } from './mock/mock-pool.js';
export { MockClient } from './mock/mock-client.js';
export { MockCallHistory, MockCallHistoryLog } from './mock/mock-call-history.js';
export { mockErrors } from './mock/mock-errors.js';
export type { Interceptable, MockInterceptor, MockScope } from './mock/mock-interceptor.js';
export { fetch, type FetchInit } from './fetch/fetch.js';
export { installGlobalFetch } from './fetch/global-fetch.js';
// Node's own WHATWG classes, exported under the names undici uses for its copies.
export const { Request, Response, Headers, FormData } = globalThis;
export type Request = globalThis.Request;
export type Response = globalThis.Response;
export type Headers = globalThis.Headers;
export type FormData = globalThis.FormData;
export type { ConnectOptions, ConnectData, UpgradeOptions, UpgradeData } from './api/tunnel.js';
export { setGlobalDispatcher, getGlobalDispatcher } from './dispatcher/global.js';
export { Dispatcher1Wrapper } from './dispatcher/dispatcher1-wrapper.js';
export { request, stream, pipeline, connect, upgrade, type UrlObject } from './api/shortcuts.js';
export { SnapshotAgent } from './mock/snapshot-agent.js';
export { SnapshotRecorder } from './mock/snapshot-recorder.js';
export type { SnapshotEntry, SnapshotRecord, SnapshotRequest, SnapshotResponse, SnapshotHeaders } from './mock/snapshot-format.js';
export { BalancedPool, type BalancedPoolOptions } from './dispatcher/balanced-pool.js';
export type { PoolStats } from './dispatcher/stats.js';
export { buildConnector, type Connector, type ConnectorBuildOptions, type ConnectorOptions, type ConnectorCallback } from './core/connector.js';
export { ProxyAgent, type ProxyAgentOptions } from './proxy/proxy-agent.js';
export { EnvHttpProxyAgent, type EnvHttpProxyAgentOptions } from './proxy/env-http-proxy-agent.js';
export { Socks5ProxyAgent, type Socks5ProxyAgentOptions } from './proxy/socks5-proxy-agent.js';
