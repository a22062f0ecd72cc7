// The same requests on each engine driver: 'inline' (on this thread's event loop, Linux) and
// 'threaded' (a thread of its own). Without the option, FERRO_ENGINE or the machine decides.
import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
for (const engine of ['inline', 'threaded']) {
  const client = new Client(server.origin, { engine });
  const bodies = await Promise.all(
    [1, 2, 3].map(async () => {
      const { statusCode, body } = await client.request({ path: '/json', method: 'GET' });
      return `${statusCode} ${JSON.stringify(await body.json())}`;
    }),
  );
  console.log(engine, bodies.join(', '));
  await client.close();
}
server.close();
