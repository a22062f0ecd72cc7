// Debug output and diagnostics channels.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import diagnosticsChannel from 'node:diagnostics_channel';
import { request } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();

// 1. NODE_DEBUG=lib prints what the engine does, on stderr. Here a child process runs one request
//    with the flag on, and we show what it printed.
const child = await promisify(execFile)(
  process.execPath,
  ['--input-type=module', '-e', `
    import { request, getGlobalDispatcher } from 'ferro';
    const { body } = await request('${server.origin}/hello');
    await body.text();
    await getGlobalDispatcher().close();
  `],
  { env: { ...process.env, NODE_DEBUG: 'lib' } },
);
console.log(child.stderr.trimEnd());
// LIB 4242: connecting to 127.0.0.1:40123 using http:h1
// LIB 4242: connected to 127.0.0.1:40123 using http:h1
// LIB 4242: sending request to GET http://127.0.0.1:40123/hello
// LIB 4242: received response to GET http://127.0.0.1:40123/hello - HTTP 200
// LIB 4242: trailers received from GET http://127.0.0.1:40123/hello

// 2. Diagnostics channels: the same events as messages, with undici's payloads under `lib:` names.
diagnosticsChannel.subscribe('lib:request:create', ({ request }) => {
  // Headers added here are sent with the request (this is how tracers propagate context).
  request.addHeader('x-request-id', 'abc-123');
});
diagnosticsChannel.subscribe('lib:request:headers', ({ request, response }) => {
  console.log(`${request.method} ${request.origin}${request.path} -> ${response.statusCode}`);
});
const { body } = await request(`${server.origin}/traced`);
console.log(await body.text());

server.close();
