// H2CClient: a Client that speaks HTTP/2 without TLS to an http: origin, by prior knowledge
// (RFC 9113 §3.3), as undici's H2CClient. The engine's h2c mode does the work; this class fixes the
// options undici fixes and refuses what it refuses.
import { InvalidArgumentError } from '../core/errors.js';
import { parseOrigin, type UrlObject } from '../core/url.js';
import type { H2Options } from './engine/h2-options.js';
import { Client, type ClientOptions } from './client.js';

/** Client options less the ones an h2c client decides itself. */
export type H2CClientOptions = Omit<ClientOptions, 'allowH2' | 'useH2c'>;

const DEFAULT_STREAMS = 100;

function h2cOptions(options: H2CClientOptions | undefined): ClientOptions {
  if (options != null && typeof options !== 'object') throw new InvalidArgumentError('invalid options');
  const { maxConcurrentStreams, pipelining, h2Options, ...rest } = (options ?? {}) as ClientOptions & {
    maxConcurrentStreams?: unknown;
    h2Options?: H2Options;
  };
  if (maxConcurrentStreams != null && (typeof maxConcurrentStreams !== 'number' || !Number.isInteger(maxConcurrentStreams) || maxConcurrentStreams < 1)) {
    throw new InvalidArgumentError('maxConcurrentStreams must be a positive integer, greater than 0');
  }
  const streams = (maxConcurrentStreams as number | undefined) ?? DEFAULT_STREAMS;
  // As undici: a pipelining that is not a positive integer falls back to the default.
  const depth = typeof pipelining === 'number' && Number.isInteger(pipelining) && pipelining > 0 ? pipelining : DEFAULT_STREAMS;
  if (depth > streams) throw new InvalidArgumentError('h2c-client: pipelining cannot be greater than maxConcurrentStreams');
  return {
    ...rest,
    maxConcurrentStreams: streams,
    pipelining: depth,
    allowH2: true,
    // Under h2Options too, where it would otherwise win over the top-level name.
    h2Options: { ...h2Options, useH2c: true },
  } as ClientOptions;
}

export class H2CClient extends Client {
  constructor(url: string | URL | UrlObject, options?: H2CClientOptions) {
    // Checked before anything else, as undici: an https: origin would mean TLS, which h2c is not.
    const protocol = typeof url === 'string' ? new URL(url).protocol : url instanceof URL ? url.protocol : parseOrigin(url).protocol;
    if (protocol !== 'http:') throw new InvalidArgumentError('h2c-client: Only h2c protocol is supported');
    super(url, h2cOptions(options));
  }
}
