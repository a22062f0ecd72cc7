// undici's companion types through the classes (`Client.Options`, …) and its interceptor option
// names at the root, next to ferro's own names.
import {
  Agent,
  BalancedPool,
  Client,
  EnvHttpProxyAgent,
  Pool,
  RoundRobinPool,
  type CacheInterceptorOptions,
  type CacheOptions,
  type DNSInterceptorOpts,
  type DNSInterceptorOptions,
  type DumpInterceptorOpts,
  type RedirectInterceptorOpts,
  type RetryInterceptorOpts,
} from 'ferro';

export const client: Client.Options = { pipelining: 2 };
export const pool: Pool.Options = { connections: 4 };
export const agent: Agent.Options = { connections: 4 };
export const balanced: BalancedPool.Options = {};
export const roundRobin: RoundRobinPool.Options = {};
export const env: EnvHttpProxyAgent.Options = { noProxy: 'localhost' };
export function stats(p: Pool): Pool.PoolStats {
  return p.stats;
}
export const socket: Client.SocketInfo = { remotePort: 80 };
// @ts-expect-error pipelining is a number
export const badClient: Client.Options = { pipelining: 'yes' };

export const cache: CacheOptions = {} satisfies CacheInterceptorOptions;
export const dns: DNSInterceptorOpts = {} satisfies DNSInterceptorOptions;
export const dump: DumpInterceptorOpts = { maxSize: 1 };
export const redirect: RedirectInterceptorOpts = { maxRedirections: 1 };
export const retry: RetryInterceptorOpts = { maxRetries: 1 };
// @ts-expect-error maxRedirections is a number
export const badRedirect: RedirectInterceptorOpts = { maxRedirections: '1' };
