// Public exports, named as in undici so that code switches by changing the import.
export { ComposedDispatcher, type DispatcherEvents } from './dispatcher/dispatcher.js';
export { Dispatcher } from './dispatcher/public-dispatcher.js';
export { Client, type ClientOptions } from './dispatcher/client.js';
export { Pool, type PoolOptions } from './dispatcher/pool.js';
export { Agent, type AgentOptions } from './dispatcher/agent.js';
export type { GlobalPoolStats } from './dispatcher/global-cap.js';
export { BodyReadable } from './api/body.js';
export type * from './core/types.js';
export { errors } from './core/errors.js';
export { MockAgent } from './mock/mock-agent.js';
export { MockPool } from './mock/mock-pool.js';
export { MockClient } from './mock/mock-client.js';
export { MockCallHistory, MockCallHistoryLog } from './mock/mock-call-history.js';
export { mockErrors } from './mock/mock-errors.js';
export type { Interceptable, MockInterceptor, MockScope } from './mock/mock-interceptor.js';
export { fetch, type FetchInit } from './fetch/public-fetch.js';
export type {
  BodyInit,
  BodyMixin,
  File,
  FormDataEntryValue,
  HeadersInit,
  ReferrerPolicy,
  RequestCache,
  RequestCredentials,
  RequestDestination,
  RequestDuplex,
  RequestInfo,
  RequestInit,
  RequestMode,
  RequestRedirect,
  ResponseInit,
  ResponseRedirectStatus,
  ResponseType,
  SpecIterable,
  SpecIterableIterator,
  SpecIterator,
} from './fetch/fetch-types.js';
export { installGlobalFetch } from './fetch/global-fetch.js';
// Node's own WHATWG classes, exported under the names undici uses for its copies (looked up on
// first use, so that importing ferro does not load Node's fetch).
export { Request, Response, Headers, FormData } from './fetch/whatwg-classes.js';
export type { ConnectOptions, ConnectData, UpgradeOptions, UpgradeData } from './api/tunnel.js';
export { setGlobalDispatcher, getGlobalDispatcher } from './dispatcher/global.js';
export { Dispatcher1Wrapper } from './dispatcher/dispatcher1-wrapper.js';
export { request, stream, pipeline, connect, upgrade, type UrlObject } from './api/shortcuts.js';
export { SnapshotAgent } from './snapshot/snapshot-agent.js';
export { SnapshotRecorder } from './snapshot/snapshot-recorder.js';
export type { SnapshotEntry, SnapshotRecord, SnapshotRequest, SnapshotResponse, SnapshotHeaders } from './snapshot/snapshot-format.js';
export { BalancedPool, type BalancedPoolOptions } from './dispatcher/balanced-pool.js';
export { RoundRobinPool, type RoundRobinPoolOptions } from './dispatcher/round-robin-pool.js';
export type { ClientStats, PoolStats } from './dispatcher/stats.js';
export { buildConnector, type Connector, type ConnectorBuildOptions, type ConnectorOptions, type ConnectorCallback } from './core/connector.js';
export { interceptors } from './interceptor/index.js';
export { DecoratorHandler } from './handler/decorator-handler.js';
export { RedirectHandler, type RedirectOptions } from './handler/redirect-handler.js';
export { RetryHandler, type RetryHandlerOptions } from './handler/retry-handler.js';
export type { RetryOptions, RetryContext, RetryCallback, OnRetryCallback } from './handler/retry-options.js';
export { RetryAgent } from './dispatcher/retry-agent.js';
export { cacheStores } from './cache/index.js';
export type { CacheStore, CacheKey, CacheValue, GetResult, CacheControlDirectives, CacheMethods, MemoryCacheStoreOpts, SqliteCacheStoreOpts, RedisCacheStoreOpts, RedisClientLike } from './cache/index.js';
export { publishUndiciChannels } from './core/diagnostics.js';
export type { DiagnosticsChannel } from './core/diagnostics-channel.js';
export { WebSocket, ping, type WebSocketInit, type BinaryType, type WebSocketEventMap } from './websocket/websocket.js';
export { EventSource, type EventSourceInit, type EventSourceEventMap } from './eventsource/eventsource.js';
export type { EventSourceOptions } from './eventsource/eventsource-options.js';
export { MessageEvent, CloseEvent, ErrorEvent } from './websocket/events.js';
export { WebSocketStream, WebSocketError, type WebSocketStreamOptions, type WebSocketCloseInfo, type WebSocketOpenInfo } from './websocket/stream.js';
export type { WebSocketOptions } from './websocket/limits.js';
export type * from './interceptor/index.js';
export { ContentDecodingError } from './native/coding.js';
export { ProxyAgent, type ProxyAgentOptions } from './proxy/proxy-agent.js';
export { EnvHttpProxyAgent, type EnvHttpProxyAgentOptions } from './proxy/env-http-proxy-agent.js';
export { Socks5ProxyAgent, type Socks5ProxyAgentOptions } from './proxy/socks5-proxy-agent.js';
export { getCookies, getSetCookies, setCookie, deleteCookie, parseCookie, type Cookie } from './cookies/headers-cookies.js';
export { CookieJar, MemoryCookieStore, SqliteCookieStore } from './cookie-jar/index.js';
export type {
  CookieJarOptions,
  CookieRequestContext,
  CookieStore,
  SqliteCookieStoreOpts,
  CookieJarCookie,
  StoredCookie,
  SameSite,
  CookieJarJSON,
  CookieJarJSONCookie,
} from './cookie-jar/index.js';
export { parseMIMEType, serializeAMimeType, type MIMEType } from './fetch/mime-type.js';
export { setGlobalOrigin, getGlobalOrigin } from './fetch/global-origin.js';
export { util } from './core/parse-headers.js';
export { H2CClient, type H2CClientOptions } from './dispatcher/h2c-client.js';
export { install } from './fetch/install.js';
export { caches, type CacheStorage, type Cache, type CacheQueryOptions, type MultiCacheQueryOptions } from './fetch/cache-storage.js';
