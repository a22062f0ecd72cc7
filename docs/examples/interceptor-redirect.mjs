import { createServer } from 'node:http';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { Agent, interceptors } from 'ferro';

// /old answers 301, /upload 307 (keep method and body); everything else echoes what it got.
const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  if (req.url === '/old') return res.writeHead(301, { location: '/new' }).end();
  if (req.url === '/upload') return res.writeHead(307, { location: '/stored' }).end();
  res.end(`${req.method} ${req.url} ${body} auth=${req.headers.authorization ?? '-'}`);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${server.address().port}`;

const agent = new Agent().compose(
  interceptors.redirect({ maxRedirections: 3, stripHeadersOnCrossOriginRedirect: ['x-api-key'] }),
);

const res = await agent.request({ origin, path: '/old', method: 'GET', headers: { authorization: 'Bearer t' } });
console.log(res.statusCode, await res.body.text());
// The URLs visited, as undici gives them.
console.log(res.context.history.map((url) => url.pathname));

// A streamed upload survives a 307 when the body is a factory: it is called for each hop.
const upload = await agent.request({
  origin,
  path: '/upload',
  method: 'PUT',
  body: () => Readable.from(['streamed ', 'upload']),
});
console.log(upload.statusCode, await upload.body.text());

await agent.close();
server.close();
