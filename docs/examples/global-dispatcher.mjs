import { Agent, request, setGlobalDispatcher, getGlobalDispatcher, Dispatcher1Wrapper } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();

// The top-level shortcuts use the global dispatcher (an Agent by default).
setGlobalDispatcher(new Agent({ connections: 4 }));
const { body } = await request(`${server.origin}/global`);
console.log(await body.text());

// Consumers of the legacy handler interface find a wrapped copy under Symbol.for('lib.globalDispatcher.1').
console.log(globalThis[Symbol.for('lib.globalDispatcher.1')] instanceof Dispatcher1Wrapper);

await getGlobalDispatcher().close();
server.close();
