import { once } from 'node:events';
import { WebSocket, WebSocketStream, ping } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();

// The WHATWG WebSocket, as in browsers and undici (http: URLs are taken as ws:).
const ws = new WebSocket(server.origin.replace('http:', 'ws:') + '/chat', { protocols: [] });
ws.binaryType = 'arraybuffer';
await once(ws, 'open');
ws.addEventListener('pong', () => console.log('pong received'));
ping(ws, Buffer.from('are you there?'));
ws.send('hello over a WebSocket');
const [text] = await once(ws, 'message');
console.log('echoed text:', text.data);
ws.send(new Uint8Array([1, 2, 3]));
const [binary] = await once(ws, 'message');
console.log('echoed bytes:', new Uint8Array(binary.data));
ws.close(1000, 'done');
const [closed] = await once(ws, 'close');
console.log('closed', closed.code, closed.reason, 'clean:', closed.wasClean);

// WebSocketStream: messages as a ReadableStream, sending through a WritableStream.
const wss = new WebSocketStream(server.origin + '/stream');
const { readable, writable } = await wss.opened;
const writer = writable.getWriter();
await writer.write('streamed hello');
const { value } = await readable.getReader().read();
console.log('stream echoed:', value);
wss.close({ closeCode: 1000, reason: 'bye' });
console.log('stream closed:', await wss.closed);

server.close();
