// A server certificate that names no host in subjectAltName (fixtures/tls/cn-only.pem: CN
// localhost, an IP address as its only SAN): Node's TLS, and so undici, checks a host name against
// the subject's CN then, and the engine's TLS does too. Each case is asked of node:https first, as
// the reference.
import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, get as httpsGet } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '../ts/index.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();
const dir = join(import.meta.dirname, 'fixtures', 'tls');
const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
const ca = read('ca.pem');

async function cnOnlyServer(): Promise<number> {
  const server = createServer({ key: read('cn-only.key'), cert: read('cn-only.pem') }, (_req, res) => res.end('hello'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  server.on('secureConnection', (s) => track({ close: async () => void s.destroy() }));
  return (server.address() as AddressInfo).port;
}

/** What node:https makes of the server with this servername: 'ok' or the error code. */
function nodeAnswer(port: number, servername: string | undefined): Promise<string> {
  return new Promise((resolve) => {
    const req = httpsGet({ host: '127.0.0.1', port, ca, servername, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve('ok'));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function ferroAnswer(port: number, servername: string | undefined): Promise<string> {
  const client = track(new Client(`https://127.0.0.1:${port}`, { connect: { ca, ...(servername ? { servername } : {}) } }));
  try {
    const { body } = await client.request({ path: '/', method: 'GET' });
    await body.text();
    return 'ok';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
}

describe('TLS: a certificate without DNS names in subjectAltName', () => {
  it('is accepted for a host name that matches its CN, as Node accepts it', async () => {
    const port = await cnOnlyServer();
    expect(await nodeAnswer(port, 'localhost')).toBe('ok');
    expect(await ferroAnswer(port, 'localhost')).toBe('ok');
  });

  it('is refused for another host name, as Node refuses it', async () => {
    const port = await cnOnlyServer();
    expect(await nodeAnswer(port, 'other.test')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(await ferroAnswer(port, 'other.test')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('is checked against its IP address SAN when the host is an IP address', async () => {
    const port = await cnOnlyServer();
    expect(await nodeAnswer(port, undefined)).toBe('ok');
    expect(await ferroAnswer(port, undefined)).toBe('ok');
  });
});
