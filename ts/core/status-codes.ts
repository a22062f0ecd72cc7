// Node's reason phrases by status code (http.STATUS_CODES), for replies made without a server.
// Taken through require, not `import … from 'node:http'`: on Node 24 an ES import of node:http
// builds its whole namespace, whose lazy WebSocket-related getters load Node's bundled fetch
// implementation (~2 MB of heap) into every program that imports ferro.
import { createRequire } from 'node:module';

export const STATUS_CODES: Readonly<Record<number, string | undefined>> = (
  createRequire(import.meta.url)('node:http') as typeof import('node:http')
).STATUS_CODES;
