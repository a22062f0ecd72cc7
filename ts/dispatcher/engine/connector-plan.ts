// How a client with given options connects: natively (the engine opens the sockets) or over Node
// sockets made by a connector, which the engine then runs HTTP over (bridged-sockets.ts).
import { buildConnector, connectorOptions, type Connector, type ConnectorBuildOptions, type ConnectFunction } from '../../core/connector.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { libDebug } from '../../core/debug.js';
import { clientCertRefusal, nodeOnlyOption } from './tls-options.js';

type Options = Record<string, unknown>;

export interface ConnectorPlan {
  /** Options whose top-level TLS and socket settings apply: the client's, or none for a buildConnector result. */
  base: Options;
  /** The `connect` options the native path serves. */
  connect: Options;
  /** Set when connections are Node sockets made by this function. */
  bridged: Connector | null;
  /** The engine runs TLS over the bridged sockets (`connect` holds its options). */
  engineTls?: boolean;
}

const kStreamTls = Symbol('ferro.streamTls');

/**
 * Marks `connect` as making plain byte streams (a proxy's tunnel): for an https origin the engine
 * runs its own TLS over them with the Node-style options `tls`, unless those need Node's TLS.
 */
export function tunnelConnector(connect: ConnectFunction, tls: Options): Connector {
  const marked: Connector = (opts, cb) => {
    connect(opts, cb);
    return undefined;
  };
  Object.defineProperty(marked, kStreamTls, { value: tls });
  return marked;
}

/**
 * Whether connections with these (merged) options need Node's sockets: an option only Node honours,
 * or a client certificate the engine's TLS refuses but Node's takes (said once on NODE_DEBUG=lib).
 */
function needsNode(o: Options, origin: URL): boolean {
  const https = origin.protocol === 'https:';
  if (nodeOnlyOption(o, https) !== undefined) return true;
  const refusal = https ? clientCertRefusal(o) : undefined;
  if (refusal === undefined) return false;
  libDebug?.(`${origin.origin} uses Node's TLS: ferro's TLS cannot use the client certificate - ${refusal}`);
  return true;
}

function tunnelPlan(c: Connector, tls: Options, opts: Options, origin: URL): ConnectorPlan {
  if (origin.protocol !== 'https:') return { base: opts, connect: {}, bridged: c };
  if (!needsNode(tls, origin)) return { base: opts, connect: tls, bridged: c, engineTls: true };
  // Options only OpenSSL honours: Node's TLS over the stream, the engine's HTTP over that.
  const overStream = buildConnector({ ...(tls as ConnectorBuildOptions), timeout: 0 });
  const layered: Connector = (target, cb) =>
    c(target, (err, socket) => {
      if (err != null || socket == null) cb(err ?? new InvalidArgumentError('connect must call back with an error or a socket'));
      else overStream({ ...target, httpSocket: socket }, cb);
    });
  return { base: opts, connect: {}, bridged: layered };
}

/** A connect function of the caller's also gets the client's `socketPath` and `allowH2` when set (undici's Client). */
function withClientOptions(c: Connector, opts: Options): Connector {
  const { socketPath, allowH2 } = opts;
  if (socketPath == null && allowH2 == null) return c;
  // socketPath is checked to be a string with the other options (pool-options.ts).
  const added = { ...(socketPath != null ? { socketPath: socketPath as string } : null), ...(allowH2 != null ? { allowH2 } : null) };
  return (target, cb) => c({ ...target, ...added }, cb);
}

/**
 * The client's happy-eyeballs options as net.connect takes them, when set (checked in
 * pool-options.ts); an attempt timeout alone implies autoSelectFamily, Node's default.
 */
function familyOptions(opts: Options): Options {
  const { autoSelectFamily, autoSelectFamilyAttemptTimeout } = opts;
  if (autoSelectFamily == null && autoSelectFamilyAttemptTimeout == null) return {};
  return { autoSelectFamily: autoSelectFamily ?? true, ...(autoSelectFamilyAttemptTimeout != null ? { autoSelectFamilyAttemptTimeout } : null) };
}

/** How a client with these options connects: natively, or over Node sockets from a connector. */
export function planConnector(origin: URL, opts: Options): ConnectorPlan {
  const c = opts.connect;
  if (c != null && typeof c !== 'object' && typeof c !== 'function') {
    throw new InvalidArgumentError('connect must be a function or an object');
  }
  if (typeof c === 'function') {
    const streamTls = (c as { [kStreamTls]?: Options })[kStreamTls];
    if (streamTls !== undefined) return tunnelPlan(c as Connector, streamTls, opts, origin);
    const built = connectorOptions(c) as Options | undefined;
    if (built === undefined) return { base: opts, connect: {}, bridged: withClientOptions(c as Connector, opts) };
    // A buildConnector result as it is: its own options only, none of the client's (as in undici).
    return { base: {}, connect: built, bridged: needsNode(built, origin) ? (c as Connector) : null };
  }
  const connect = (c ?? {}) as Options;
  const tlsOpts = typeof opts.tls === 'object' && opts.tls !== null ? (opts.tls as Options) : {};
  const family = familyOptions(opts);
  const merged = { ...tlsOpts, localAddress: opts.localAddress, ...family, ...connect };
  if (!needsNode(merged, origin)) return { base: opts, connect, bridged: null };
  const built = buildConnector({
    ...tlsOpts,
    maxCachedSessions: opts.maxCachedSessions as number | null | undefined,
    // The client's default, as undici's Client passes it to its connector.
    allowH2: (opts.allowH2 as boolean | null | undefined) ?? true,
    ...family,
    ...connect,
    // The same precedence as the native path's options (pool-options.ts).
    socketPath: (opts.socketPath ?? connect.socketPath) as string | null | undefined,
    timeout: (opts.connectTimeout ?? connect.timeout) as number | null | undefined,
  });
  return { base: opts, connect, bridged: built };
}
