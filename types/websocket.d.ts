// ferro/types/websocket: the names undici declares in its types/websocket.d.ts, re-exported from ferro's own declarations.
export { WebSocket, CloseEvent, MessageEvent, ErrorEvent, WebSocketStream, WebSocketError, ping, type BinaryType } from '../dist/main.js';
