// ferro/types/client for CommonJS consumers: the same declarations as client.d.ts (see main.d.cts).
import type * as m from './client.js' with { 'resolution-mode': 'import' };
export = m;
