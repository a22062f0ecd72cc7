// The engine's DNS resolver and cache (crates/engine/src/dns) as JS sees them: `lookup` returns at
// once, getaddrinfo runs on an engine thread, and results come back batched through one function.
// The process is kept alive only while lookups are pending.
import { binding, type NativeResolver } from './binding.js';
import { DNS_ADDRESSES, DNS_ERROR } from './events.js';
import { deliveredBatch, frames } from './frames.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Node's shape for resolver errors, so `err.code === 'ENOTFOUND'` works as with `dns.lookup`. */
export interface LookupError extends Error {
  code: string;
  syscall: 'getaddrinfo';
  hostname: string;
}

type Callback = (err: LookupError | null, addresses: ResolvedAddress[]) => void;

const pending = new Map<number, { hostname: string; cb: Callback }>();
let native: NativeResolver | null = null;
let nextId = 1;

/** Hands each result of a batch (DNS_ADDRESSES / DNS_ERROR frames) to its caller. */
function onResults(arena: Buffer | ArrayBuffer, _own?: Buffer[], offset?: number, length?: number): void {
  const batch = deliveredBatch(arena, offset, length);
  for (const f = frames(batch); f.next(); ) {
    const entry = pending.get(f.id);
    if (entry === undefined || (f.kind !== DNS_ADDRESSES && f.kind !== DNS_ERROR)) continue;
    pending.delete(f.id);
    if (f.kind === DNS_ADDRESSES) {
      deliver(entry, null, readAddresses(batch, f.start, f.end));
    } else {
      const codeEnd = f.start + 1 + batch[f.start]!;
      const code = batch.toString('latin1', f.start + 1, codeEnd);
      const message = batch.toString('utf8', codeEnd, f.end);
      const err = Object.assign(new Error(message), { code, syscall: 'getaddrinfo' as const, hostname: entry.hostname });
      deliver(entry, err, []);
    }
  }
  if (pending.size === 0) native?.unref();
}

/** A DNS_ADDRESSES payload: `family u8 | len u8 | text` per address. */
function readAddresses(batch: Buffer, at: number, end: number): ResolvedAddress[] {
  const addresses: ResolvedAddress[] = [];
  while (at + 2 <= end) {
    const family = batch[at] === 6 ? 6 : 4;
    const textEnd = at + 2 + batch[at + 1]!;
    addresses.push({ family, address: batch.toString('latin1', at + 2, textEnd) });
    at = textEnd;
  }
  return addresses;
}

function deliver(entry: { cb: Callback }, err: LookupError | null, addresses: ResolvedAddress[]): void {
  try {
    entry.cb(err, addresses);
  } catch (thrown) {
    // A throwing callback must not lose the other results of the batch.
    process.nextTick(() => {
      throw thrown;
    });
  }
}

function resolver(): NativeResolver {
  native ??= new binding.NativeResolver(onResults);
  return native;
}

/**
 * Resolves `hostname` through the engine's process-wide cache (records at most `maxAgeMs` old) and
 * calls back asynchronously. `family` 0 reports both families, 4 or 6 only that one.
 */
export function engineLookup(hostname: string, family: 0 | 4 | 6, maxAgeMs: number, cb: Callback): void {
  const r = resolver();
  const id = nextId;
  nextId = nextId === 0xffffffff ? 1 : nextId + 1;
  if (pending.size === 0) r.ref();
  pending.set(id, { hostname, cb });
  r.lookup(id, hostname, family, maxAgeMs);
}

/** Lookups the engine sent to the system resolver so far (its cache misses), process-wide. */
export function engineLookupMisses(): number {
  return resolver().misses();
}
