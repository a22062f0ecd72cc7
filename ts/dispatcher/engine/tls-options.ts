// Node-style TLS options (a Client's `connect` object, its `tls` object and the top-level
// `allowH2` / `maxCachedSessions`) → the engine's TLS config for an https origin. The engine speaks
// TLS with rustls: a client with options only OpenSSL (or Node's net) can honour runs over Node's
// sockets instead (`nodeOnlyOption`, connector-plan.ts), so no option is silently ignored.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { InvalidArgumentError, NotSupportedError } from '../../core/errors.js';
import { binding, type TlsConfig } from '../../native/binding.js';

type Options = Record<string, unknown>;

// Options of tls.connect rustls cannot honour: clients with them take Node's TLS.
const UNSUPPORTED = [
  'ciphers',
  'checkServerIdentity',
  'pfx',
  'secureContext',
  'secureOptions',
  'secureProtocol',
  'ecdhCurve',
  'sigalgs',
  'crl',
  'privateKeyEngine',
  'privateKeyIdentifier',
  'clientCertEngine',
  'session',
  'requestOCSP',
  'pskCallback',
  'enableTrace',
];

// Options of net.connect the engine's own sockets cannot honour (any protocol).
const NET_ONLY = ['localAddress', 'localPort', 'family', 'hints', 'lookup', 'autoSelectFamilyAttemptTimeout'];
const OLD_TLS = new Set(['TLSv1', 'TLSv1.1']);

/**
 * The first option in `o` (merged `tls` and `connect` options) that only Node's sockets honour,
 * or undefined when the engine's native path can serve them all.
 */
export function nodeOnlyOption(o: Options, https: boolean): string | undefined {
  for (const name of NET_ONLY) if (o[name] != null) return name;
  // The engine always races address families (happy eyeballs); only Node's sockets can not.
  if (o.autoSelectFamily === false) return 'autoSelectFamily';
  if (!https) return undefined;
  for (const name of UNSUPPORTED) if (o[name] != null) return name;
  // rustls speaks TLS 1.2 and 1.3 only.
  for (const name of ['minVersion', 'maxVersion']) if (OLD_TLS.has(o[name] as string)) return name;
  // rustls takes one certificate chain and key.
  for (const name of ['cert', 'key']) if (Array.isArray(o[name]) && (o[name] as unknown[]).length > 1) return name;
  return undefined;
}

/**
 * Why the engine's TLS (rustls) cannot present the client certificate and key in `o` while Node's
 * TLS can: rustls refuses some that OpenSSL takes (an X.509 v1 certificate, an RSA key under 2048
 * bits, P-521, Ed448 and DSA keys). Such a client runs over Node's TLS instead. Undefined when
 * there is no pair, the engine takes it, or Node refuses it too (then the engine's
 * InvalidArgumentError reaches the caller, as for any bad option).
 */
export function clientCertRefusal(o: Options): string | undefined {
  if (o.cert == null || o.key == null) return undefined;
  let cert: string;
  let key: string;
  try {
    cert = pemList(single(o.cert, 'cert'), 'cert').join('\n');
    key = privateKey(o.key, o.passphrase);
  } catch {
    return undefined; // a malformed option: tlsConfig reports it
  }
  try {
    binding.checkClientCert(cert, key);
    return undefined;
  } catch (refused) {
    if ((refused as { code?: unknown }).code !== 'InvalidArg') throw refused;
    return nodeTakes(o, cert, key) ? (refused as Error).message : undefined;
  }
}

/** Whether Node's TLS can present this pair: it makes a context of them, and the key is the certificate's. */
function nodeTakes(o: Options, cert: string, key: string): boolean {
  try {
    tls.createSecureContext({ cert: o.cert, key: o.key, passphrase: o.passphrase } as tls.SecureContextOptions);
    // A context drops a key that does not match its certificate without a word; the handshake then fails.
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

let defaultRoots: string[] | undefined;

/** The store Node's TLS trusts by default: its bundled roots plus NODE_EXTRA_CA_CERTS. */
function roots(): string[] {
  if (defaultRoots) return defaultRoots;
  // Node ≥ 22.15 reports its effective default store (extra and, with --use-system-ca, system CAs).
  const get = (tls as { getCACertificates?: (type?: string) => string[] }).getCACertificates;
  if (typeof get === 'function') {
    defaultRoots = get('default');
  } else {
    defaultRoots = [...tls.rootCertificates];
    const extra = process.env.NODE_EXTRA_CA_CERTS;
    if (extra) {
      try {
        defaultRoots.push(readFileSync(extra, 'utf8'));
      } catch {
        // Node itself only warns about an unreadable file and goes on with its bundled roots.
      }
    }
  }
  return defaultRoots;
}

function pem(v: unknown, name: string): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  throw new InvalidArgumentError(`${name} must be a string or a Buffer`);
}

function pemList(v: unknown, name: string): string[] {
  return (Array.isArray(v) ? v : [v]).map((x) => pem(x, name));
}

/** One item (rustls takes a single certificate chain and key) from Node's string-or-array forms. */
function single<T>(v: unknown, name: string): T {
  if (!Array.isArray(v)) return v as T;
  if (v.length !== 1) throw new NotSupportedError(`${name}: only one ${name} is supported`);
  return v[0] as T;
}

function privateKey(v: unknown, passphrase: unknown): string {
  let key = single<unknown>(v, 'key');
  if (key !== null && typeof key === 'object' && !(key instanceof Uint8Array)) {
    const k = key as { pem?: unknown; passphrase?: unknown };
    passphrase = k.passphrase ?? passphrase;
    key = k.pem;
  }
  const text = pem(key, 'key');
  if (passphrase == null || !text.includes('ENCRYPTED')) return text;
  if (typeof passphrase !== 'string') throw new InvalidArgumentError('passphrase must be a string');
  try {
    return createPrivateKey({ key: text, format: 'pem', passphrase }).export({ type: 'pkcs8', format: 'pem' }) as string;
  } catch (err) {
    throw new InvalidArgumentError(`invalid key: ${(err as Error).message}`);
  }
}

function tlsVersion(v: unknown, name: string): string | undefined {
  if (v == null) return undefined;
  if (typeof v !== 'string') throw new InvalidArgumentError(`${name} must be a string`);
  return v;
}

/**
 * The TLS part of an https pool's config. `opts` are the Client/Pool options, `connect` its
 * `connect` object (which wins over `opts.tls` and the top-level options, as in undici).
 */
export function tlsConfig(opts: Options, connect: Options): TlsConfig {
  const o: Options = {
    ...(typeof opts.tls === 'object' && opts.tls !== null ? (opts.tls as Options) : null),
    ...connect,
  };
  for (const name of UNSUPPORTED) {
    if (o[name] != null) {
      throw new NotSupportedError(`${name} is not supported by ferro's TLS yet`);
    }
  }

  const allowH2 = o.allowH2 ?? opts.allowH2;
  if (allowH2 != null && typeof allowH2 !== 'boolean') throw new InvalidArgumentError('allowH2 must be a valid boolean value');
  const preferH2 = o.preferH2 ?? opts.preferH2;
  const maxCachedSessions = o.maxCachedSessions ?? opts.maxCachedSessions;
  if (maxCachedSessions != null && (!Number.isInteger(maxCachedSessions) || (maxCachedSessions as number) < 0)) {
    throw new InvalidArgumentError('maxCachedSessions must be a positive integer or zero');
  }
  const servername = o.servername;
  if (servername != null && typeof servername !== 'string') throw new InvalidArgumentError('servername must be a string');

  const hasCert = o.cert != null;
  const hasKey = o.key != null;
  if (hasCert !== hasKey) throw new InvalidArgumentError(hasCert ? 'cert requires a key' : 'key requires a cert');

  // As undici 8: h2 is offered unless `allowH2: false`; the engine serves whichever ALPN picks.
  const alpnProtocols = allowH2 !== false ? (preferH2 === true ? ['h2', 'http/1.1'] : ['http/1.1', 'h2']) : ['http/1.1'];

  const rejectUnauthorized =
    o.rejectUnauthorized != null ? o.rejectUnauthorized !== false : process.env.NODE_TLS_REJECT_UNAUTHORIZED !== '0';

  const cfg: TlsConfig = {
    rejectUnauthorized,
    alpnProtocols,
    servername: servername || undefined,
    minVersion: tlsVersion(o.minVersion, 'minVersion'),
    maxVersion: tlsVersion(o.maxVersion, 'maxVersion'),
    maxCachedSessions: (maxCachedSessions as number | null | undefined) ?? undefined,
  };
  if (o.ca != null) cfg.ca = pemList(o.ca, 'ca');
  // Roots matter only when the chain is checked against the default store.
  else if (rejectUnauthorized) cfg.roots = roots();
  if (hasCert) {
    cfg.cert = pemList(single(o.cert, 'cert'), 'cert').join('\n');
    cfg.key = privateKey(o.key, o.passphrase);
  }
  return cfg;
}

/** Runs a native call whose `InvalidArg` failures (bad PEM, bad key...) are the caller's fault. */
export function nativeArgs<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'InvalidArg') throw new InvalidArgumentError((err as Error).message);
    throw err;
  }
}
