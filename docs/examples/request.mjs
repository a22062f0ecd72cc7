import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const client = new Client(server.origin);

const { statusCode, headers, body } = await client.request({ path: '/json', method: 'GET' });
console.log(statusCode, headers['content-type'], await body.json());

await client.close();
server.close();
