// ferro/types/websocket for CommonJS consumers: the same declarations as websocket.d.ts (see main.d.cts).
import type * as m from './websocket.js' with { 'resolution-mode': 'import' };
export = m;
