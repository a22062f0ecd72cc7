// The engine's DNS resolver and cache (crates/engine/src/dns) as JS sees them: `lookup` returns at
// once, getaddrinfo runs on an engine thread, and results come back batched through one function.
// The process is kept alive only while lookups are pending.
import { binding, type NativeResolver } from './binding.js';

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

function onResults(batch: Buffer): void {
  let at = 0;
  while (at < batch.length) {
    const id = batch.readUInt32LE(at);
    const ok = batch[at + 4] === 1;
    at += 5;
    const entry = pending.get(id);
    pending.delete(id);
    if (ok) {
      const count = batch.readUInt16LE(at);
      at += 2;
      const addresses: ResolvedAddress[] = [];
      for (let i = 0; i < count; i++) {
        const family = batch[at] === 6 ? 6 : 4;
        const len = batch[at + 1]!;
        addresses.push({ family, address: batch.toString('latin1', at + 2, at + 2 + len) });
        at += 2 + len;
      }
      if (entry !== undefined) deliver(entry, null, addresses);
    } else {
      const codeLen = batch[at]!;
      const code = batch.toString('latin1', at + 1, at + 1 + codeLen);
      at += 1 + codeLen;
      const msgLen = batch.readUInt16LE(at);
      const message = batch.toString('utf8', at + 2, at + 2 + msgLen);
      at += 2 + msgLen;
      if (entry !== undefined) {
        const err = Object.assign(new Error(message), { code, syscall: 'getaddrinfo' as const, hostname: entry.hostname });
        deliver(entry, err, []);
      }
    }
  }
  if (pending.size === 0) native?.unref();
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
