import { Writable } from 'node:stream';
import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const client = new Client(server.origin);

// The response body is written straight into the Writable the factory returns.
const chunks = [];
const { opaque } = await client.stream({ path: '/hello', method: 'GET', opaque: chunks }, ({ statusCode, opaque }) => {
  console.log('status', statusCode);
  return new Writable({
    write(chunk, _encoding, callback) {
      opaque.push(chunk);
      callback();
    },
  });
});
console.log(Buffer.concat(opaque).toString());

await client.close();
server.close();
