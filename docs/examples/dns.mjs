import { Agent, interceptors } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const port = new URL(server.origin).port;

// Without a custom lookup the engine resolves (off the JS thread) and caches for maxTTL ms.
const agent = new Agent().compose(interceptors.dns({ maxTTL: 30_000 }));
const res = await agent.request({ origin: `http://localhost:${port}`, path: '/engine', method: 'GET' });
console.log(await res.body.text());

// A custom lookup runs in JS: here every name is this machine. It is called once per TTL.
let lookups = 0;
const pinned = new Agent().compose(
  interceptors.dns({
    lookup: (origin, _options, callback) => {
      lookups++;
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    },
  }),
);
for (let i = 0; i < 3; i++) {
  const r = await pinned.request({ origin: `http://api.example:${port}`, path: `/pinned/${i}`, method: 'GET' });
  console.log(await r.body.text());
}
console.log('lookups:', lookups);

await Promise.all([agent.close(), pinned.close()]);
server.close();
