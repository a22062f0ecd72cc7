import { once } from 'node:events';
import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const proxy = await startServer(); // answers CONNECT and echoes through the tunnel
const client = new Client(proxy.origin);

const { statusCode, socket } = await client.connect({ path: 'example.com:443' });
console.log('tunnel status', statusCode);
socket.write('hello');
const [reply] = await once(socket, 'data');
console.log(reply.toString());
socket.end();

await client.close();
proxy.close();
