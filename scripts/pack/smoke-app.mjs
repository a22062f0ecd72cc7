// What pack:all runs inside the empty project it installed the packed tarballs into (with no cargo
// on PATH): a request, a fetch and a TLS request through the installed ferro against servers on
// 127.0.0.1. The TLS server's certificate (localhost.pem / localhost.key, signed by ca.pem) is
// copied beside this file from __test__/fixtures/tls.
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const here = new URL('.', import.meta.url);
const file = (name) => readFileSync(new URL(name, here), 'utf8');
const answer = (req, res) => res.end(`pong ${req.url}`);
const plain = createServer(answer).listen(0, '127.0.0.1');
const tls = createTlsServer({ cert: file('localhost.pem'), key: file('localhost.key') }, answer).listen(0, '127.0.0.1');
await Promise.all([once(plain, 'listening'), once(tls, 'listening')]);

const { request, fetch, Agent } = await import('ferro');
const dispatcher = new Agent({ connect: { ca: file('ca.pem') } });
const origin = `http://127.0.0.1:${plain.address().port}`;
const results = [];
try {
  const r = await request(`${origin}/request`, { dispatcher });
  results.push(['request', r.statusCode, await r.body.text()]);
  const f = await fetch(`${origin}/fetch`, { dispatcher });
  results.push(['fetch', f.status, await f.text()]);
  const t = await request(`https://localhost:${tls.address().port}/tls`, { dispatcher });
  results.push(['tls', t.statusCode, await t.body.text()]);
} finally {
  await dispatcher.close();
  plain.close();
  tls.close();
}

const pkgDir = createRequire(import.meta.url).resolve('ferro/package.json').replace(/package\.json$/, '');
if (existsSync(`${pkgDir}native`)) throw new Error('the installed package must not carry a native/ build');
for (const [what, status, text] of results) {
  if (status !== 200 || text !== `pong /${what}`) throw new Error(`${what}: unexpected answer ${status} ${JSON.stringify(text)}`);
}
console.log(`smoke: ${process.platform}-${process.arch} Node ${process.version}: request, fetch and TLS request answered 200 through the packed ferro`);
