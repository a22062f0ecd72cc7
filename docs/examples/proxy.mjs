import { ProxyAgent, EnvHttpProxyAgent, request, fetch } from 'ferro';
import { startServer } from './_server.mjs';
import { startProxy } from './_proxy.mjs';

const server = await startServer();
const proxy = await startProxy();

// Every request through one proxy: http origins in absolute form, https ones through CONNECT
// (proxyTunnel: true tunnels http origins too).
const agent = new ProxyAgent({ uri: proxy.uri, token: 'Bearer example' });
const { statusCode, body } = await request(`${server.origin}/hello`, { dispatcher: agent });
console.log(statusCode, await body.text());

const tunnelled = new ProxyAgent({ uri: proxy.uri, proxyTunnel: true });
const res = await fetch(`${server.origin}/json`, { dispatcher: tunnelled });
console.log(res.status, await res.json());

// The proxy from HTTP_PROXY / HTTPS_PROXY, with NO_PROXY exceptions.
const fromEnv = new EnvHttpProxyAgent({ httpProxy: proxy.uri, noProxy: 'localhost,.internal.example' });
await (await request(`${server.origin}/env`, { dispatcher: fromEnv })).body.dump();

console.log('the proxy saw:', proxy.log);
await Promise.all([agent.close(), tunnelled.close(), fromEnv.close()]);
proxy.close();
server.close();
