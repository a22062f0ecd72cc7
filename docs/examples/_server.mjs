// A small local server the examples talk to (so every example runs as it is).
import { createServer } from 'node:http';
import { once } from 'node:events';
import { acceptWebSocketEcho } from '../../bench/ws-echo.mjs';

export async function startServer() {
  const server = createServer((req, res) => {
    if (req.url === '/json') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ hello: 'world' }));
    }
    if (req.url === '/echo') return req.pipe(res);
    res.end(`you asked for ${req.method} ${req.url}`);
  });
  server.on('upgrade', (req, socket, head) => {
    // WebSocket handshakes get a WebSocket echo; any other upgrade a raw byte echo.
    if (req.headers.upgrade?.toLowerCase() === 'websocket') return acceptWebSocketEcho(req, socket, head);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n');
    socket.on('data', (d) => socket.write(d));
    socket.on('end', () => socket.end());
  });
  server.on('connect', (req, socket) => {
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    socket.on('data', (d) => socket.write(`tunnel:${d}`));
    socket.on('end', () => socket.end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
