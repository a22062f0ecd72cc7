import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, errors, interceptors } from 'ferro';

const server = createServer((req, res) => {
  if (req.url === '/missing') {
    res.writeHead(404, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: 'not found', path: req.url }));
  }
  res.end('fine');
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

const agent = new Agent().compose(interceptors.responseError());
const ok = await agent.request({ origin, path: '/', method: 'GET' });
console.log(ok.statusCode, await ok.body.text());

try {
  await agent.request({ origin, path: '/missing', method: 'GET' });
} catch (err) {
  if (err instanceof errors.ResponseError) console.log(err.statusCode, err.headers['content-type'], err.body);
}

await agent.close();
server.close();
