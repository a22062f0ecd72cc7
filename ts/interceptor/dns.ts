// interceptors.dns: resolves each origin's host name once per TTL, sends the request to a picked
// address (the Host header and TLS servername keep the name), and on a refused or timed-out
// connect tries the other address family once. Without a custom `lookup` the engine resolves
// (ts/native/resolver.ts: getaddrinfo off the JS thread, one cache for the process).
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { InformationalError, InvalidArgumentError } from '../core/errors.js';
import { hasSafeIterator } from '../core/headers.js';
import { toControllerHandler } from '../handler/legacy-handler.js';
import { engineLookup } from '../native/resolver.js';
import { detachedController as detached } from '../handler/detached-controller.js';
import type {
  DispatchController,
  DispatchFn,
  DispatchHandler,
  DispatchOptions,
  DispatcherComposeInterceptor,
  IncomingHeaders,
  LibHeaders,
} from '../core/types.js';
import { spread } from '../core/spread.js';

export interface DNSInterceptorRecord {
  address: string;
  family: 4 | 6;
  /** Milliseconds; capped at maxTTL (absent: maxTTL). */
  ttl?: number;
  /** Overrides the origin's port for this address. */
  port?: number;
}

interface DNSFamilyRecords {
  ips: DNSInterceptorRecord[];
  /** Round-robin position kept by the default pick. */
  offset?: number;
}

export interface DNSInterceptorOriginRecords {
  records: { 4: DNSFamilyRecords | null; 6: DNSFamilyRecords | null };
  /** Family balancing position kept by the default pick. */
  offset?: number;
}

export interface DNSStorage {
  readonly size: number;
  /** The stored records, or null / undefined for none. */
  get(origin: string): DNSInterceptorOriginRecords | null | undefined;
  set(origin: string, records: DNSInterceptorOriginRecords | null, options: { ttl: number }): void;
  delete(origin: string): void;
  /** True: lookups are skipped (the request goes to the name) and nothing new is stored. */
  full(): boolean;
}

interface DNSLookupOptions {
  affinity: 4 | 6 | null;
  dualStack: boolean;
  maxTTL: number;
  maxItems: number;
  /** The address family to resolve, as dns.lookup takes it: 0 for both, 4 or 6 without dualStack. */
  family: 0 | 4 | 6;
}

type DNSLookup = (
  origin: URL,
  options: DNSLookupOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: Iterable<DNSInterceptorRecord>) => void,
) => void;

type DNSPick = (origin: URL, records: DNSInterceptorOriginRecords, affinity: 4 | 6 | null) => DNSInterceptorRecord | null;

// lookup and pick are declared as methods so that their parameters compare both ways: a function
// typed as undici types it (`options: dns.LookupOptions`, `affinity: 4 | 6`) is accepted.
export interface DNSInterceptorOptions {
  maxTTL?: number;
  maxItems?: number;
  dualStack?: boolean;
  affinity?: 4 | 6;
  lookup?(...args: Parameters<DNSLookup>): void;
  pick?(...args: Parameters<DNSPick>): ReturnType<DNSPick>;
  storage?: DNSStorage;
}

/** Per-request overrides (`dns` in the dispatch options). */
interface DNSRequestOptions {
  affinity?: 4 | 6;
  dualStack?: boolean;
  lookup?(...args: Parameters<DNSLookup>): void;
  pick?(...args: Parameters<DNSPick>): ReturnType<DNSPick>;
}

interface Stored extends DNSInterceptorRecord {
  timestamp: number;
  ttl: number;
}

/** The default storage: a Map bounded by maxItems. */
class MapStorage implements DNSStorage {
  readonly #records = new Map<string, DNSInterceptorOriginRecords>();
  readonly #maxItems: number;
  constructor(maxItems: number) {
    this.#maxItems = maxItems;
  }
  get size(): number {
    return this.#records.size;
  }
  get(origin: string): DNSInterceptorOriginRecords | null {
    return this.#records.get(origin) ?? null;
  }
  set(origin: string, records: DNSInterceptorOriginRecords | null): void {
    if (records === null) this.#records.delete(origin);
    else this.#records.set(origin, records);
  }
  delete(origin: string): void {
    this.#records.delete(origin);
  }
  full(): boolean {
    return this.#records.size >= this.#maxItems;
  }
}

const MAX_OFFSET = 2 ** 31 - 1;

function advance(holder: { offset?: number }): number {
  holder.offset = holder.offset === undefined || holder.offset >= MAX_OFFSET ? 0 : holder.offset + 1;
  return holder.offset;
}

/** While a fresh answer is picked from, the time it arrived: it serves this request whatever its TTL
 * (with maxTTL 0 a millisecond's tick between storing and picking would otherwise discard it). */
let judgedAt: number | null = null;

function expired(ip: DNSInterceptorRecord): boolean {
  const s = ip as Partial<Stored>;
  return s.timestamp !== undefined && s.ttl !== undefined && (judgedAt ?? Date.now()) - s.timestamp > s.ttl;
}

/** Round robin within a family, dropping expired records as it meets them. */
function pickInFamily(family: DNSFamilyRecords | null): DNSInterceptorRecord | null {
  while (family !== null && family.ips.length > 0) {
    const at = advance(family) % family.ips.length;
    const ip = family.ips[at]!;
    if (!expired(ip)) return ip;
    family.ips.splice(at, 1);
  }
  return null;
}

function validate(opts: DNSInterceptorOptions | undefined): void {
  if (opts == null) return;
  if (typeof opts !== 'object') throw new InvalidArgumentError('dns options must be an object');
  const { maxTTL, maxItems, affinity, dualStack, lookup, pick, storage } = opts;
  if (maxTTL != null && (typeof maxTTL !== 'number' || !(maxTTL >= 0))) {
    throw new InvalidArgumentError('Invalid maxTTL. Must be a positive number');
  }
  if (maxItems != null && (typeof maxItems !== 'number' || !(maxItems >= 1))) {
    throw new InvalidArgumentError('Invalid maxItems. Must be a positive number and greater than zero');
  }
  if (affinity != null && affinity !== 4 && affinity !== 6) throw new InvalidArgumentError('Invalid affinity. Must be either 4 or 6');
  if (dualStack != null && typeof dualStack !== 'boolean') throw new InvalidArgumentError('Invalid dualStack. Must be a boolean');
  if (lookup != null && typeof lookup !== 'function') throw new InvalidArgumentError('Invalid lookup. Must be a function');
  if (pick != null && typeof pick !== 'function') throw new InvalidArgumentError('Invalid pick. Must be a function');
  if (
    storage != null &&
    (typeof storage.get !== 'function' || typeof storage.set !== 'function' || typeof storage.full !== 'function' || typeof storage.delete !== 'function')
  ) {
    throw new InvalidArgumentError('Invalid storage. Must be a object with methods: { get, set, full, delete }');
  }
}

function hasHost(headers: LibHeaders | undefined): boolean {
  if (headers == null) return false;
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'host') return true;
    return false;
  }
  if (hasSafeIterator(headers)) {
    for (const [name] of headers as Iterable<[string, unknown]>) if (String(name).toLowerCase() === 'host') return true;
    return false;
  }
  return Object.keys(headers).some((k) => k.toLowerCase() === 'host');
}

/** `headers` plus `host` when they have none (the connection goes to an address, not the name). */
function withHost(host: string, headers: LibHeaders | undefined): LibHeaders {
  if (hasHost(headers)) return headers!;
  if (headers == null) return { host };
  if (Array.isArray(headers)) return ['host', host, ...(headers as string[])];
  if (hasSafeIterator(headers)) {
    return [['host', host], ...(headers as Iterable<[string, string | string[] | undefined]>)];
  }
  return { host, ...(headers as Record<string, string>) };
}

function addressOrigin(origin: URL, ip: DNSInterceptorRecord): string {
  const host = ip.family === 6 ? `[${ip.address}]` : ip.address;
  const port = typeof ip.port === 'number' ? `:${ip.port}` : origin.port !== '' ? `:${origin.port}` : '';
  return `${origin.protocol}//${host}${port}`;
}

class DNSInstance {
  readonly maxTTL: number;
  readonly maxItems: number;
  readonly dualStack: boolean;
  readonly affinity: 4 | 6 | null;
  readonly lookup: DNSLookup;
  readonly pick: DNSPick;
  readonly storage: DNSStorage;

  constructor(opts: DNSInterceptorOptions) {
    this.maxTTL = opts.maxTTL ?? 10_000;
    this.maxItems = opts.maxItems ?? Infinity;
    this.dualStack = opts.dualStack ?? true;
    this.affinity = this.dualStack ? (opts.affinity ?? null) : (opts.affinity ?? 4);
    this.lookup = opts.lookup ?? this.#engineLookup;
    this.pick = opts.pick ?? this.#defaultPick;
    this.storage = opts.storage ?? new MapStorage(this.maxItems);
  }

  /** The engine resolves; its cache serves records no older than maxTTL. */
  #engineLookup: DNSLookup = (origin, options, cb) => {
    engineLookup(origin.hostname, options.family, this.maxTTL, (err, addresses) => cb(err, addresses));
  };

  /** Balances between families (when dual-stack with no affinity), round robin within one. */
  #defaultPick: DNSPick = (_origin, origin, affinity) => {
    const { records } = origin;
    if (!this.dualStack) return pickInFamily(records[affinity ?? 4]);
    const want = affinity ?? ((advance(origin) & 1) === 1 ? 6 : 4);
    const first = records[want];
    return first !== null && first.ips.length > 0 ? pickInFamily(first) : pickInFamily(records[want === 4 ? 6 : 4]);
  };

  /** The origin to connect to for `origin` (whose hostname is a name), or an error. */
  resolve(origin: URL, overrides: DNSRequestOptions | undefined, cb: (err: Error | null, address?: string) => void): void {
    const affinity = overrides?.affinity ?? this.affinity;
    const pick = overrides?.pick ?? this.pick;
    const stored = this.storage.get(origin.hostname);
    // A storage of the user's may answer a miss with undefined as well as null.
    if (stored == null && this.storage.full()) return cb(null, origin.origin);
    if (stored != null) {
      const ip = pick(origin, stored, affinity);
      if (ip != null) return cb(null, addressOrigin(origin, ip));
      this.storage.delete(origin.hostname);
      return this.resolve(origin, overrides, cb);
    }
    const dualStack = overrides?.dualStack ?? this.dualStack;
    const options: DNSLookupOptions = {
      affinity,
      dualStack,
      maxTTL: this.maxTTL,
      maxItems: this.maxItems,
      family: dualStack ? 0 : (affinity ?? 4),
    };
    const lookup = overrides?.lookup ?? this.lookup;
    let called = false;
    const done = (err: Error | null, addresses?: Iterable<DNSInterceptorRecord> | null): void => {
      if (called) return;
      called = true;
      const list = addresses == null ? [] : [...addresses];
      if (err != null || list.length === 0) return cb(err ?? new InformationalError('No DNS entries found'));
      const arrived = Date.now();
      const records = this.#store(origin.hostname, list);
      let ip: DNSInterceptorRecord | null;
      judgedAt = arrived;
      try {
        ip = pick(origin, records, affinity);
      } finally {
        judgedAt = null;
      }
      if (ip == null) {
        // Nothing usable (e.g. only the other family with dualStack off): as if nothing was found.
        this.storage.delete(origin.hostname);
        return cb(new InformationalError('No DNS entries found'));
      }
      cb(null, addressOrigin(origin, ip));
    };
    try {
      lookup(origin, options, done);
    } catch (err) {
      done(err as Error);
    }
  }

  #store(hostname: string, addresses: DNSInterceptorRecord[]): DNSInterceptorOriginRecords {
    const timestamp = Date.now();
    const records: DNSInterceptorOriginRecords = { records: { 4: null, 6: null } };
    let minTTL = this.maxTTL;
    const seen = new Set<string>();
    for (const a of addresses) {
      const family = a.family === 6 ? 6 : 4;
      // The same address on another port is another endpoint (a lookup may give ports).
      const key = `${a.address}/${family}/${a.port ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const ttl = typeof a.ttl === 'number' ? Math.min(a.ttl, this.maxTTL) : this.maxTTL;
      minTTL = Math.min(minTTL, ttl);
      const rec: Stored = { ...a, family, ttl, timestamp };
      (records.records[family] ??= { ips: [] }).ips.push(rec);
    }
    this.storage.set(hostname, records, { ttl: minTTL });
    return this.storage.get(hostname) ?? records;
  }

  /** An address of `family` for a retry after a failed connect, or null. */
  other(origin: URL, family: 4 | 6): DNSInterceptorRecord | null {
    const stored = this.storage.get(origin.hostname);
    return stored == null ? null : pickInFamily(stored.records[family]);
  }
}

const RETRY_OTHER_FAMILY = new Set(['ECONNREFUSED', 'ETIMEDOUT']);

/** Passes everything through; a refused or timed-out connect retries once with the other family. */
class DNSHandler implements DispatchHandler {
  readonly #handler: DispatchHandler;
  readonly #instance: DNSInstance;
  readonly #origin: URL;
  readonly #options: DispatchOptions;
  readonly #dispatch: DispatchFn;
  readonly #dualStack: boolean;
  #address: string;
  #retried = false;

  constructor(handler: DispatchHandler, instance: DNSInstance, origin: URL, address: string, options: DispatchOptions, dispatch: DispatchFn, dualStack: boolean) {
    this.#handler = handler;
    this.#instance = instance;
    this.#origin = origin;
    this.#address = address;
    this.#options = options;
    this.#dispatch = dispatch;
    this.#dualStack = dualStack;
  }

  onRequestStart(controller: DispatchController, context: object): void {
    this.#handler.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHeaders, statusMessage?: string): void {
    this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: DispatchController, trailers: IncomingHeaders): void {
    this.#handler.onResponseEnd?.(controller, trailers);
  }
  onBodySent(chunk: Buffer): void {
    this.#handler.onBodySent?.(chunk);
  }

  onResponseError(controller: DispatchController, err: Error): void {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && RETRY_OTHER_FAMILY.has(code) && this.#dualStack && !this.#retried) {
      this.#retried = true;
      const family = new URL(this.#address).hostname.startsWith('[') ? 4 : 6;
      const ip = this.#instance.other(this.#origin, family);
      if (ip !== null) {
        this.#address = addressOrigin(this.#origin, ip);
        this.#dispatch(spread(this.#options, { origin: this.#address }), this);
        return;
      }
    } else if (code === 'ENOTFOUND') {
      this.#instance.storage.delete(this.#origin.hostname);
    }
    this.#handler.onResponseError?.(controller, err);
  }
}

/** The dns interceptor. */
export function dns(opts?: DNSInterceptorOptions): DispatcherComposeInterceptor {
  validate(opts);
  const instance = new DNSInstance(opts ?? {});
  return (dispatch: DispatchFn): DispatchFn =>
    function dnsInterceptor(options: DispatchOptions, handler: DispatchHandler): boolean {
      if (options.origin == null) return dispatch(options, handler);
      const origin = options.origin instanceof URL ? options.origin : new URL(String(options.origin));
      const bare = origin.hostname.replace(/^\[|\]$/g, '');
      if (isIP(bare) !== 0) return dispatch(options, handler);
      const overrides = (options as { dns?: DNSRequestOptions }).dns;
      const target = toControllerHandler(handler);
      instance.resolve(origin, overrides, (err, address) => {
        if (err !== null) {
          target.onResponseError?.(detached, err);
          return;
        }
        const next: DispatchOptions = spread(options, {
          // TLS verifies and sends SNI for the name; the connection goes to the address.
          servername: origin.hostname,
          origin: address!,
          headers: withHost(origin.host, options.headers),
        });
        try {
          dispatch(next, new DNSHandler(target, instance, origin, address!, next, dispatch, overrides?.dualStack ?? instance.dualStack));
        } catch (thrown) {
          target.onResponseError?.(detached, thrown as Error);
        }
      });
      return true;
    };
}
