// Loads the platform binary: a locally built one first (npm install from a clone builds it into
// native/), then the prebuilt per-platform package; otherwise a message that says what to do.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';
import { packageSuffix, platformTriple } from './platform.js';

export { detectLibc, packageSuffix, platformTriple } from './platform.js';

export interface PoolConfig {
  host: string;
  port: number;
  socketPath?: string | null;
  connections: number;
  pipelining: number;
  connectTimeout: number;
  keepAliveTimeout: number;
  keepAliveMaxTimeout: number;
  keepAliveTimeoutThreshold: number;
  maxHeaderSize: number;
  maxResponseSize: number;
  maxRequestsPerClient: number;
  /** Set for https origins (src/tls_config.rs). */
  tls?: TlsConfig;
  /** Connections are sockets JS makes, asked for by BRIDGE_OPEN events (ts/dispatcher/engine/bridged-sockets.ts). */
  bridged?: boolean;
  /** TCP keep-alive probes after this many idle ms (0: the system's default); negative: none. */
  tcpKeepAlive?: number;
  /** HTTP/2 sessions (ts/dispatcher/engine/h2-options.ts). */
  maxConcurrentStreams?: number;
  initialWindowSize?: number;
  connectionWindowSize?: number;
  pingInterval?: number;
  h2c?: boolean;
  /** A connection may turn out to be h2 (https offering it, or h2c): the first one chooses its
   * protocol before the pool opens others. */
  protocolProbe?: boolean;
  /** The id of a NativeConnCap this pool's connections count against (an Agent's maxGlobalConnections). */
  cap?: number;
  /** HTTP/3 (ts/dispatcher/engine/h3-options.ts; set for https origins only). */
  allowH3?: boolean;
  h3PriorKnowledge?: boolean;
  h3MaxConcurrentStreams?: number;
  h3IdleTimeout?: number;
  h3InitialMaxData?: number;
  h3InitialMaxStreamData?: number;
  h3Race?: number;
  h3ZeroRtt?: boolean;
}

/** A cap on connections shared by pools (crates/engine/src/cap.rs). */
export interface NativeConnCap {
  readonly id: number;
  /** Connections open or connecting under the cap. */
  readonly open: number;
  /** Pools waiting for a slot. */
  readonly waiting: number;
}

export interface TlsConfig {
  /** Trusted CAs (PEM); replace `roots` when given. */
  ca?: string[];
  /** The default store (PEM): Node's roots plus NODE_EXTRA_CA_CERTS. */
  roots?: string[];
  cert?: string;
  /** Unencrypted (PEM). */
  key?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
  alpnProtocols?: string[];
  minVersion?: string;
  maxVersion?: string;
  maxCachedSessions?: number;
}

export interface NativePool {
  readonly id: number;
  /**
   * Queues a request; false when the pool was destroyed. `head` is `METHOD\0PATH\0name\0value\0…`,
   * its code points the bytes; a head that breaks the rules throws with code `InvalidArg` and
   * undici's message.
   */
  dispatch(
    id: number,
    head: string,
    body: Buffer | null,
    flags: number,
    headersTimeout: number,
    bodyTimeout: number,
    bodyLength: number,
  ): boolean;
  flush(): void;
  /** The engine's side of `stats`: open connections, those asking for work, requests not yet taken. */
  stats(): { connected: number; free: number; queued: number };
  /** Its queued requests wait for a slot of its Agent's maxGlobalConnections (NativeConnCap). */
  waitsForCap(): boolean;
  /** An HTTPS response's Alt-Svc named an h3 endpoint (`host` empty: the origin's); `maxAgeMs` 0 clears it. */
  altSvc(host: string, port: number, maxAgeMs: number): void;
  close(): void;
  /** No request waits any more: connection attempts under way are given up. */
  cancelUnused(): void;
  destroy(): void;
}

export interface NativeEngine {
  /** Inline engines that wait for replies awake: [waits made, of them woken in time]; else null. */
  readonly busyPoll: [number, number] | null;
  createPool(cfg: PoolConfig): NativePool;
  ref(): void;
  unref(): void;
  write(id: number, chunk: Buffer): boolean;
  end(id: number): void;
  pause(id: number): void;
  resume(id: number): void;
  abort(id: number): void;
  /** A streamed body's source failed: what was written still goes out, then the request is aborted. */
  failBody(id: number): void;
  /** Answers BRIDGE_OPEN with a connected socket; false: nobody waits any more, destroy it. */
  bridgeAttach(id: number, addrs: string): boolean;
  /** Answers BRIDGE_OPEN with a failure (`code`: an engine error code); false: nobody waits. */
  bridgeFail(id: number, code: number, errno: string, message: string): boolean;
  /** Bytes read from a bridged socket; false: pause it until BRIDGE_DRAIN. */
  bridgeData(id: number, chunk: Buffer): boolean;
  bridgeEnd(id: number): void;
  bridgeError(id: number, errno: string, message: string): void;
  bridgeWritable(id: number, writable: boolean): void;
  /**
   * Runs upgraded request `id` (dispatched with RequestFlag.WEBSOCKET) as the engine's WebSocket
   * session (src/websocket.rs); throws when the server's `extensions` answer is unacceptable.
   * False: the connection is gone.
   */
  wsStart(id: number, extensions: string, maxPayloadSize: number, maxFragments: number, stalledWriteTimeout: number): boolean;
  /** Queues a text message on a WebSocket session; false: wait for its drain event. */
  wsText(id: number, data: string): boolean;
  /** Queues a frame with RFC 6455 opcode `op` (binary, ping, pong, close); false: wait for the drain event. */
  wsSend(id: number, op: number, data: Uint8Array): boolean;
  /** Sends what wsText / wsSend queued (they do not wake the engine: one flush per tick). */
  wsFlush(id: number): void;
  /** Live requests and connection tasks in the engine (leak checks). */
  counts(): { requests: number; connections: number };
  close(): void;
  /** How the engine is driven: its own thread, or this thread's event loop (issue 20). */
  readonly driver: 'inline' | 'threaded';
  /** Why an inline engine was asked for and a threaded one made. */
  readonly fallback: string | null;
  /** Inline engines: runs what is ready now; its events arrive on a later turn. */
  tick(): void;
  /** `pool.flush()` then `tick()`, in one crossing. */
  flushTick(pool: NativePool): void;
}

/** One body's content decoder (src/coding.rs); each call returns at most 64 KiB, null: none ready. */
export interface NativeDecoder {
  /** Adds compressed bytes; `readInto` decodes them. */
  push(chunk: Buffer): void;
  /** Ends the input. */
  end(): void;
  /** Decodes into `out` (at most 64 KiB); 0: nothing until more input (after `end`: complete). */
  readInto(out: Buffer): number;
  /** Frees the state of a decoder whose body was abandoned (done already after the end or an error). */
  release(): void;
}

/** The engine's process-wide resolver (src/dns.rs); results arrive packed through `onResults`. */
export interface NativeResolver {
  lookup(id: number, hostname: string, family: number, maxAgeMs: number): void;
  /** Lookups that reached the system resolver in this process. */
  misses(): number;
  ref(): void;
  unref(): void;
}

export interface NativeBinding {
  NativeResolver: new (onResults: (batch: Buffer) => void) => NativeResolver;
  NativeEngine: new (
    onEvents: (batch: Buffer | ArrayBuffer, own?: Buffer[], offset?: number, length?: number) => void,
    workers?: number,
    inline?: boolean,
    /** How long an inline engine's loop may wait awake for a reply before it sleeps (0: never; default 15). */
    busyPollUs?: number,
  ) => NativeEngine;
  NativeConnCap: new (limit: number) => NativeConnCap;
  /** Null when the body passes as it is; throws (code DECODE_TOO_MANY_CODINGS) on a hostile list. */
  createDecoder(contentEncoding: string, maxSize: number, lenient: boolean): NativeDecoder | null;
  /** Decoders in the process still holding state (leak checks). */
  liveDecodersCount(): number;
  /** True in debug builds, which carry test-only hooks (see `src/binding.rs`). */
  testHooks(): boolean;
  /** Throws (code InvalidArg) when the engine's TLS cannot present this client cert chain and key. */
  checkClientCert(cert: string, key: string): void;
  /** The engine's table of boundary codes (crates/engine/src/codes.rs), name → number per group. */
  boundaryCodes(): BoundaryCodes;
  /** Header names events send as an index (crates/engine/src/header_names.rs), in index order. */
  knownHeaderNames(): string[];
  /** `[stamp, hrtime]`: an engine timing stamp and `uv_hrtime()` read together, in ns (hrtime -1 where unknown). */
  timingsAnchor(): number[];
}

/** What `boundaryCodes` returns: the numbers JS and the engine exchange. */
interface BoundaryCodes {
  /** Event kinds (events.ts). */
  events: Record<string, number>;
  /** The framing of every batch (frames.ts): `HEADER`, a frame header's bytes. */
  frame: Record<string, number>;
  /** Error codes (error-codes.ts `ErrorCode`). */
  errors: Record<string, number>;
  /** Request flags (RequestFlag in events.ts). */
  flags: Record<string, number>;
}

export interface LoaderInput {
  /** What `platformTriple()` says. */
  triple: string;
  /** Where a binary built in the checkout would be (the first that exists is taken). */
  localPaths: string[];
  require: NodeJS.Require;
  /** The platforms prebuilt packages exist for (package suffixes). */
  prebuilt: string[];
}

/**
 * Loads the binary: one built in the checkout, else the platform package; otherwise throws an
 * error (code ERR_FERRO_NATIVE_MISSING) naming the platform, what was looked for, and what to do.
 */
export function loadBinding({ triple, localPaths, require, prebuilt }: LoaderInput): NativeBinding {
  const local = localPaths.find((p) => existsSync(p));
  if (local) return require(local) as NativeBinding;
  const pkg = `@ferro-http/binding-${triple}`;
  let why: string;
  try {
    return require(pkg) as NativeBinding;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // Not installed at all, or installed but unloadable (wrong libc, corrupt file...).
    why = e.code === 'MODULE_NOT_FOUND' && e.message.includes(pkg) ? 'not installed' : `cannot be loaded: ${e.message.split('\n')[0]}`;
  }
  const supported = prebuilt.includes(triple);
  const err = new Error(
    [
      `ferro: no native engine for this platform (${triple}; Node ${process.version}).`,
      `  Looked for ${localPaths.join(' / ')}: not built.`,
      `  Looked for the package ${pkg}: ${why}.`,
      supported
        ? `  ${triple} has a prebuilt package: reinstall ferro with optional dependencies enabled (not --omit=optional / --no-optional), for this platform.`
        : `  Prebuilt packages exist for: ${prebuilt.join(', ') || 'none'}.`,
      '  To build from source: install Rust (https://rustup.rs), then in a clone of ferro run `npm install`',
      `  (or \`npm run build:native\`), which builds native/ferro.${triple}.node.`,
    ].join('\n'),
  ) as NodeJS.ErrnoException;
  err.code = 'ERR_FERRO_NATIVE_MISSING';
  throw err;
}

function load(): NativeBinding {
  const require = createRequire(import.meta.url);
  // A development knob: load this binary instead (the suite's panic tests point it at the
  // test-hooks build). Set but unloadable is an error, never a silent fallback to another binary.
  const override = process.env.FERRO_NATIVE_PATH;
  if (override) return require(override) as NativeBinding;
  const triple = platformTriple();
  // ts/native/ and dist/native/ are both two levels below the package root.
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  let targets: string[] = [];
  try {
    targets = (require(join(root, 'package.json')) as { napi?: { targets?: string[] } }).napi?.targets ?? [];
  } catch {
    // Without the manifest the message just cannot list the prebuilt platforms.
  }
  return loadBinding({
    triple,
    // A source build on Windows names its file after the toolchain's target: msvc or gnu.
    localPaths: (triple.startsWith('win32-') ? [triple, triple.replace(/-gnu$/, '-msvc')] : [triple]).map((t) => join(root, 'native', `ferro.${t}.node`)),
    require,
    prebuilt: targets.map(packageSuffix),
  });
}

export const binding: NativeBinding = load();
