// ferro/types/retry-handler for CommonJS consumers: the same declarations as retry-handler.d.ts (see main.d.cts).
import type * as m from './retry-handler.js' with { 'resolution-mode': 'import' };
export = m;
