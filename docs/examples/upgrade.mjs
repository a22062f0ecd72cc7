import { once } from 'node:events';
import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const client = new Client(server.origin);

// 101 Switching Protocols: the socket is a Duplex over the engine's connection.
const { headers, socket } = await client.upgrade({ path: '/', protocol: 'echo' });
console.log('upgraded to', headers.upgrade, 'remote', socket.remoteAddress);
socket.write('ping');
const [reply] = await once(socket, 'data');
console.log('got', reply.toString());
socket.end();

await client.close();
server.close();
