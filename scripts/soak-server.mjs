// The soak's server, in its own process so its memory is not counted as the client's. Routes:
// /ok small body, /big 64 KiB, /error a 500, /close answers then closes the connection,
// /destroy sends part of a body then destroys the socket, /slow answers after 20 ms.
import { createServer } from 'node:http';

const big = Buffer.alloc(64 * 1024, 'b');
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  switch (req.url) {
    case '/big':
      res.end(big);
      return;
    case '/error':
      res.statusCode = 500;
      res.end('fail');
      return;
    case '/close':
      res.setHeader('connection', 'close');
      res.end('bye');
      return;
    case '/destroy':
      res.writeHead(200, { 'content-length': '100' });
      res.write('part');
      setImmediate(() => req.socket.destroy());
      return;
    case '/slow':
      setTimeout(() => res.end('late'), 20);
      return;
    default:
      res.end('ok');
  }
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => m === 'stop' && server.close(() => process.exit(0)));
