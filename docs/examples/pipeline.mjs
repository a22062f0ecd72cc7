import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const client = new Client(server.origin);

// A Duplex: what is written goes up as the request body, what the handler returns comes out.
let echoed = '';
await pipeline(
  Readable.from(['streamed ', 'request ', 'body']),
  client.pipeline({ path: '/echo', method: 'PUT' }, ({ body }) => body),
  new Writable({
    write(chunk, _encoding, callback) {
      echoed += chunk;
      callback();
    },
  }),
);
console.log(echoed);

await client.close();
server.close();
