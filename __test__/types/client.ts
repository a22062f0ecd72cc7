// Client members and options undici declares: autoSelectFamily, pipelining, ClientStats,
// buildConnector's TCP options, the dns interceptor's lookup / pick as undici types them.
import type { LookupOptions } from 'node:dns';
import { Agent, Client, buildConnector, type ClientStats, type DNSInterceptorOpts, type PoolStats } from 'ferro';

const client = new Client('http://localhost', { autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 300e3 });
export const depth: number = client.pipelining;
export const connected: boolean = client.stats.connected;
export const stats: ClientStats = client.stats;
export const built = buildConnector({ localPort: 1234, keepAlive: true, allowH2: true });
export const dns: DNSInterceptorOpts = {
  lookup: (_origin: URL, _options: LookupOptions, cb: (err: NodeJS.ErrnoException | null, addresses: { address: string; family: 4 | 6 }[]) => void) =>
    cb(null, []),
  pick: (_origin: URL, _records, _affinity: 4 | 6) => null,
};

// An Agent's origins are Pools or (with connections: 1) Clients, as undici types them.
export const perOrigin: Record<string, ClientStats | PoolStats> = new Agent().stats;
// @ts-expect-error an origin's entry may be a Client's ClientStats
export const onlyPools: Record<string, PoolStats> = new Agent().stats;
// @ts-expect-error pipelining is read-only (the engine's connection takes it when the client is made)
client.pipelining = 2;
// @ts-expect-error connected is a boolean, as undici's ClientStats
export const count: number = client.stats.connected;
// @ts-expect-error autoSelectFamily is a boolean
export const badFamily = new Client('http://localhost', { autoSelectFamily: 'yes' });
// @ts-expect-error localPort is a number
export const badPort = buildConnector({ localPort: '1234' });
