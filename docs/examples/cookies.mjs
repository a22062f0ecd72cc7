import { createServer } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, CookieJar, interceptors, fetch } from 'ferro';

// /login answers 302 with a session cookie; /account needs that cookie; /prefs sets one for /prefs only.
const server = createServer((req, res) => {
  if (req.url === '/login') {
    res.writeHead(302, { location: '/account', 'set-cookie': ['session=s3cr3t; HttpOnly; Path=/', 'seen=1; Max-Age=3600'] });
    return res.end();
  }
  if (req.url === '/prefs') {
    res.setHeader('set-cookie', 'theme=dark; Path=/prefs; SameSite=Strict');
    return res.end('saved');
  }
  res.end(`${req.url} got cookie: ${req.headers.cookie ?? '(none)'}`);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

// The cookies interceptor works in either order with redirect: the 302's cookie reaches /account.
const jar = new CookieJar();
const agent = new Agent().compose(interceptors.redirect({ maxRedirections: 3 }), interceptors.cookies({ jar }));

const login = await agent.request({ origin, path: '/login', method: 'GET' });
console.log(await login.body.text());

// A request's own cookie header is kept; the jar's cookies go on the same line (and yours are not stored).
const own = await agent.request({ origin, path: '/account', method: 'GET', headers: { cookie: 'debug=1' } });
console.log(await own.body.text());

// fetch through the same dispatcher shares the jar; longer paths come first in the header.
await (await fetch(`${origin}/prefs`, { dispatcher: agent })).text();
console.log(await (await fetch(`${origin}/prefs/page`, { dispatcher: agent })).text());

// What the jar holds for a URL, synchronously.
for (const c of jar.getCookies(`${origin}/prefs/page`)) console.log(c.name, c.path, c.httpOnly, c.sameSite ?? '-', c.expires ? 'persistent' : 'session');

// Persist and restore: toJSON / CookieJar.fromJSON (a file, a database, an environment variable...).
const saved = JSON.stringify(jar);
const restored = CookieJar.fromJSON(saved);
console.log('restored:', restored.getCookieString(`${origin}/`));

// On Node 22.5+ the jar can live in SQLite (node:sqlite), shared by processes using the same file.
if (process.getBuiltinModule?.('node:sqlite')) {
  const { SqliteCookieStore } = await import('ferro');
  const dir = mkdtempSync(join(tmpdir(), 'cookies-example-'));
  const store = new SqliteCookieStore({ location: join(dir, 'cookies.db') });
  const persistent = new CookieJar({ store });
  persistent.setCookie('id=42; Max-Age=600', origin);
  console.log('sqlite:', persistent.getCookieString(origin));
  store.close();
  rmSync(dir, { recursive: true, force: true });
} else {
  console.log('sqlite: node:sqlite needs Node 22.5+; this is', process.version);
}

jar.deleteCookie('seen', origin);
console.log('after deleteCookie:', jar.getCookieString(`${origin}/`));

await agent.close();
server.close();
