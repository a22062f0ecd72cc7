import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, RetryAgent, interceptors } from 'ferro';

// Busy twice (with Retry-After: 0), then fine.
let calls = 0;
const server = createServer((req, res) => {
  calls++;
  if (calls % 3 !== 0) return res.writeHead(503, { 'retry-after': '0' }).end('busy');
  res.end(`served on attempt ${calls}`);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

const agent = new Agent().compose(
  interceptors.retry({ maxRetries: 3, minTimeout: 100, maxTimeout: 2000, timeoutFactor: 2 }),
);
const res = await agent.request({ origin, path: '/', method: 'GET' });
console.log(res.statusCode, await res.body.text());

// Out of retries, the last error is what you get.
const err = await agent
  .request({ origin, path: '/', method: 'GET', retryOptions: { maxRetries: 0 } })
  .catch((e) => e);
console.log(err.name, err.statusCode);

// RetryAgent wraps any dispatcher the same way.
const retryAgent = new RetryAgent(new Agent(), { minTimeout: 10 });
const again = await retryAgent.request({ origin, path: '/', method: 'GET' });
console.log(again.statusCode, await again.body.text());

await agent.close();
await retryAgent.close();
server.close();
