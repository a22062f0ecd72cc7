// node:http, taken through require rather than `import … from 'node:http'`: on Node 24 an ES import
// of node:http builds its whole namespace, whose lazy WebSocket-related getters load Node's bundled
// fetch implementation (~2 MB of heap) into every program that imports ferro.
import { createRequire } from 'node:module';

export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof import('node:http');
