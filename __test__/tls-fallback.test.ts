// Client certificates Node's TLS accepts but the engine's (rustls) refuses — fixtures/tls
// legacy-clients.sh: an X.509 v1 certificate, an RSA-1024, a P-521 and an Ed448 key. Such a
// client runs over Node's TLS (the bridged transport) and says so once on NODE_DEBUG=lib; a pair
// Node refuses too is still an InvalidArgumentError when the client is made.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type ServerOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { Agent, Client, Pool, buildConnector, errors } from '../ts/index.js';
import { lines, useChildRuns, type ChildRun } from './fixtures/child-run.js';
import { useCleanup } from './fixtures/cleanup.js';

const dir = join(import.meta.dirname, 'fixtures', 'tls');
const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
const ca = read('ca.pem');
const pair = (name: string): { key: string; cert: string } => ({ key: read(`${name}.key`), cert: read(`${name}.pem`) });
const LEGACY = ['client-v1', 'client-rsa1024', 'client-p521', 'client-ed448'];

/** Whether this Node's own TLS takes the pair (what decides between fallback and a typed error). */
function nodeTakes(p: { key: string; cert: string }): boolean {
  try {
    createSecureContext(p);
    return true;
  } catch {
    return false;
  }
}

const { track } = useCleanup();
const runChild = useChildRuns();

interface Running {
  origin: string;
  close(): Promise<void>;
}

/** An https server that requires a client certificate from the fixture CA and answers with its CN. */
async function serve(extra: ServerOptions = {}): Promise<Running> {
  const server = createServer({ ...pair('localhost'), ca, requestCert: true, rejectUnauthorized: true, ...extra }, (req, res) => {
    const s = req.socket as TLSSocket;
    res.end(`${s.authorized ? 'authorized' : 'anonymous'} ${s.getPeerCertificate().subject?.CN}`);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return track({
    origin: `https://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  });
}

async function get(d: Client | Pool | Agent, origin: string): Promise<string> {
  const { statusCode, body } = await d.request({ origin, path: '/', method: 'GET' });
  expect(statusCode).toBe(200);
  return body.text();
}

describe('client certificates the engine refuses', () => {
  it.each(LEGACY)('%s: Node\'s TLS presents it and the server authorizes it', async (name) => {
    const s = await serve();
    if (!nodeTakes(pair(name))) {
      // This Node's OpenSSL refuses it too (Node 24 refuses RSA-1024 at its default security
      // level): then it is the constructor's typed error, as for any pair Node refuses.
      expect(() => new Client(s.origin, { connect: { ca, ...pair(name) } })).toThrow(errors.InvalidArgumentError);
      return;
    }
    const c = track(new Client(s.origin, { connect: { ca, ...pair(name) } }));
    expect(await get(c, s.origin)).toBe(`authorized ferro ${name}`);
  });

  it('the fallback is per client: a v1 certificate in `tls`, on a Pool, through an Agent, and from buildConnector', async () => {
    const s = await serve();
    const v1 = pair('client-v1');
    expect(await get(track(new Pool(s.origin, { tls: { ca, ...v1 }, connections: 2 })), s.origin)).toBe('authorized ferro client-v1');
    expect(await get(track(new Agent({ connect: { ca, ...v1 } })), s.origin)).toBe('authorized ferro client-v1');
    const connect = buildConnector({ ca, ...v1 });
    expect(await get(track(new Client(s.origin, { connect })), s.origin)).toBe('authorized ferro client-v1');
  });

  it('a certificate and key the engine takes stay on the engine (no fallback)', async () => {
    const s = await serve();
    expect(await get(track(new Client(s.origin, { connect: { ca, ...pair('client') } })), s.origin)).toBe('authorized ferro test client');
  });

  it('a pair Node refuses too is an InvalidArgumentError from the constructor', () => {
    const attempts = [
      // The v1 certificate with another certificate's key.
      { cert: read('client-v1.pem'), key: read('client.key') },
      // An Ed448 key with a certificate that is not base64.
      { cert: '-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n', key: read('client-ed448.key') },
      // A v1 certificate with a P-521 key it does not belong to.
      { cert: read('client-v1.pem'), key: read('client-p521.key') },
    ];
    for (const opts of attempts) {
      let err: unknown;
      try {
        new Client('https://127.0.0.1:1', { connect: { ca, ...opts } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(errors.InvalidArgumentError);
      expect(err).toMatchObject({ code: 'UND_ERR_INVALID_ARG' });
    }
  });
});

describe('NODE_DEBUG=lib', () => {
  /** Two requests on two connections of one Pool with the `cert` pair, in a child process. */
  const twoRequests = (nodeDebug: string | undefined, origin: string, cert: string): Promise<ChildRun> =>
    runChild(
      nodeDebug,
      origin,
      `
        const { readFileSync } = await import('node:fs');
        const read = (n) => readFileSync(process.env.DIR + '/' + n, 'utf8');
        const connect = { ca: read('ca.pem'), cert: read(process.env.CERT + '.pem'), key: read(process.env.CERT + '.key') };
        // allowH2: false: with h2 offered the Pool waits for the first connection's ALPN, and the
        // second request may then reuse it instead of opening the second connection counted here.
        const pool = new ferro.Pool(origin, { connections: 2, pipelining: 1, allowH2: false, connect });
        const texts = await Promise.all([0, 1].map(async () => (await pool.request({ path: '/', method: 'GET' })).body.text()));
        console.log(texts.join(','));
        await pool.close();
      `,
      { DIR: dir, CERT: cert },
    );

  it('says once per client that it uses Node\'s TLS, and why', async () => {
    const s = await serve();
    const run = await twoRequests('lib', s.origin, 'client-v1');
    expect(run.stdout).toBe('authorized ferro client-v1,authorized ferro client-v1\n');
    expect(lines(run).filter((l) => l.includes("Node's TLS"))).toEqual([
      `LIB ${run.pid}: ${s.origin} uses Node's TLS: ferro's TLS cannot use the client certificate - cert/key: invalid peer certificate: Other(OtherError(UnsupportedCertVersion))`,
    ]);
    // Both connections were made (the notice is not per connection).
    expect(lines(run).filter((l) => l.includes('connected to'))).toHaveLength(2);
  });

  it('says nothing without the flag, or when the engine takes the certificate', async () => {
    const s = await serve();
    expect((await twoRequests(undefined, s.origin, 'client-v1')).stderr).toBe('');
    const modern = await twoRequests('lib', s.origin, 'client');
    expect(modern.stdout).toBe('authorized ferro test client,authorized ferro test client\n');
    expect(lines(modern).filter((l) => l.includes("Node's TLS"))).toEqual([]);
    expect(lines(modern).filter((l) => l.includes('connected to'))).toHaveLength(2);
  });
});
