// A minimal forward proxy for the examples: absolute-form requests and CONNECT tunnels, and it
// logs what it was asked so the examples can show the route a request took.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';

export async function startProxy() {
  const log = [];
  const server = createServer((req, res) => {
    log.push(`${req.method} ${req.url}`);
    const target = new URL(req.url);
    const up = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  server.on('connect', (req, client) => {
    log.push(`CONNECT ${req.url}`);
    const [host, port] = req.url.split(':');
    const up = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.pipe(up).pipe(client);
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { uri: `http://127.0.0.1:${server.address().port}`, log, close: () => server.close() };
}
