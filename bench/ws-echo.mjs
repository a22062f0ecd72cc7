// A minimal RFC 6455 echo server side, for the bench's ws-* scenarios and the docs' example server:
// client frames are masked; each message goes back unmasked with the same opcode; close is
// answered; no extensions are negotiated. The answers to the messages of one read go out in one
// write (corked), as crates/bench-server answers the requests of a read: the server's cost per
// message then stays below the client's, whichever way a client spreads its messages over writes.
import crypto from 'node:crypto';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
function wsHeader(opcode, len) {
  if (len < 126) return Buffer.from([0x80 | opcode, len]);
  if (len < 65536) return Buffer.from([0x80 | opcode, 126, len >> 8, len & 0xff]);
  const h = Buffer.alloc(10);
  h[0] = 0x80 | opcode;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(len), 2);
  return h;
}
function wsEcho(socket, head) {
  let buf = head;
  let fragments = [];
  let fragOpcode = 0;
  socket.setNoDelay(true);
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    socket.cork();
    try {
      echoFrames(buf.length ? Buffer.concat([buf, chunk]) : chunk);
    } finally {
      socket.uncork();
    }
  });
  /** Answers every whole frame in `data`; keeps the rest for the next read. */
  function echoFrames(data) {
    buf = data;
    let o = 0;
    for (;;) {
      if (buf.length - o < 2) break;
      const b0 = buf[o];
      let len = buf[o + 1] & 0x7f;
      let p = o + 2;
      if (len === 126) {
        if (buf.length - o < 4) break;
        len = buf.readUInt16BE(o + 2);
        p += 2;
      } else if (len === 127) {
        if (buf.length - o < 10) break;
        len = Number(buf.readBigUInt64BE(o + 2));
        p += 8;
      }
      if (buf.length < p + 4 + len) break;
      const mask = buf.subarray(p, p + 4);
      const payload = Buffer.allocUnsafe(len);
      for (let i = 0; i < len; i++) payload[i] = buf[p + 4 + i] ^ mask[i & 3];
      o = p + 4 + len;
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (opcode === 8) {
        socket.end(Buffer.concat([wsHeader(8, payload.length), payload]));
        return;
      }
      if (opcode === 9) socket.write(Buffer.concat([wsHeader(10, len), payload]));
      if (opcode === 0 || opcode === 1 || opcode === 2) {
        if (opcode !== 0) fragOpcode = opcode;
        fragments.push(payload);
        if (fin) {
          const msg = fragments.length === 1 ? fragments[0] : Buffer.concat(fragments);
          fragments = [];
          socket.write(wsHeader(fragOpcode, msg.length));
          socket.write(msg);
        }
      }
    }
    buf = o === buf.length ? Buffer.alloc(0) : buf.subarray(o);
  }
}

/** node:http 'upgrade' listener: completes the handshake and echoes. */
export function acceptWebSocketEcho(req, socket, head) {
  const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + WS_GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  wsEcho(socket, head);
}

