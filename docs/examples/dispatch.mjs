import { Client } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();
const client = new Client(server.origin);

// The low-level API: a controller-based handler.
await new Promise((resolve, reject) => {
  const chunks = [];
  client.dispatch(
    { path: '/dispatch', method: 'GET' },
    {
      onRequestStart(controller, context) {},
      onResponseStart(controller, statusCode, headers) {
        console.log('status', statusCode);
      },
      onResponseData(controller, chunk) {
        chunks.push(chunk); // controller.pause() / controller.resume() for backpressure
      },
      onResponseEnd(controller, trailers) {
        console.log(Buffer.concat(chunks).toString());
        resolve();
      },
      onResponseError(controller, err) {
        reject(err);
      },
    },
  );
});

await client.close();
server.close();
