// Loads the platform binary: a locally built one first (npm install from a clone builds it into
// native/), then the prebuilt per-platform package.
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';

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
  /** Connections are sockets JS makes, asked for by BRIDGE_OPEN events (ts/dispatcher/bridge.ts). */
  bridged?: boolean;
  /** TCP keep-alive probes after this many idle ms (0: the system's default); negative: none. */
  tcpKeepAlive?: number;
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
  close(): void;
  destroy(): void;
}

export interface NativeEngine {
  createPool(cfg: PoolConfig): NativePool;
  ref(): void;
  unref(): void;
  drain(): Buffer;
  write(id: number, chunk: Buffer): boolean;
  end(id: number): void;
  pause(id: number): void;
  resume(id: number): void;
  abort(id: number): void;
  /** Answers BRIDGE_OPEN with a connected socket; false: nobody waits any more, destroy it. */
  bridgeAttach(id: number, addrs: string): boolean;
  /** Answers BRIDGE_OPEN with a failure (`code`: an engine error code); false: nobody waits. */
  bridgeFail(id: number, code: number, errno: string, message: string): boolean;
  /** Bytes read from a bridged socket; false: pause it until BRIDGE_DRAIN. */
  bridgeData(id: number, chunk: Buffer): boolean;
  bridgeEnd(id: number): void;
  bridgeError(id: number, errno: string, message: string): void;
  bridgeWritable(id: number, writable: boolean): void;
  /** Live requests and connection tasks in the engine (leak checks). */
  counts(): { requests: number; connections: number };
  close(): void;
}

export interface NativeBinding {
  NativeEngine: new (onEvents: (batch: Buffer) => void, workers?: number) => NativeEngine;
  /** True in debug builds, which carry test-only hooks (see `src/binding.rs`). */
  testHooks(): boolean;
}

function isMusl(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl');
  } catch {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return !report?.header?.glibcVersionRuntime;
  }
}

function platformTriple(): string {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function load(): NativeBinding {
  const require = createRequire(import.meta.url);
  const triple = platformTriple();
  const here = dirname(fileURLToPath(import.meta.url));
  const local = join(here, '..', '..', 'native', `ferro.${triple}.node`);
  const tried: string[] = [];
  if (existsSync(local)) return require(local) as NativeBinding;
  tried.push(local);
  const pkg = `@ferro-http/binding-${triple}`;
  try {
    return require(pkg) as NativeBinding;
  } catch (err) {
    tried.push(`${pkg} (${(err as Error).message.split('\n')[0]})`);
  }
  throw new Error(
    `ferro: no native binary for ${triple}. Tried:\n  ${tried.join('\n  ')}\n` +
      'Build it from source with `npm run build:native` (needs a Rust toolchain).',
  );
}

export const binding: NativeBinding = load();
