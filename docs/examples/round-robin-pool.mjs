import { RoundRobinPool } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
// Up to two connections; concurrent requests are spread over them in turn.
const pool = new RoundRobinPool(server.origin, { connections: 2 });

const answers = await Promise.all(
  ['/a', '/b', '/c'].map(async (path) => (await pool.request({ path, method: 'GET' })).body.text()),
);
console.log(answers, pool.stats.connected);

await pool.close();
server.close();
