import { Agent, fetch, installGlobalFetch } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const agent = new Agent();

// WHATWG fetch on a ferro dispatcher.
const res = await fetch(`${server.origin}/json`, { dispatcher: agent });
console.log(res.status, await res.json());

// Opt in: Node's own globalThis.fetch now runs on the ferro engine too.
const uninstall = installGlobalFetch(agent);
const viaNode = await globalThis.fetch(`${server.origin}/through-node-fetch`);
console.log(await viaNode.text());
uninstall();

await agent.close();
server.close();
