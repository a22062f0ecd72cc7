// ferro/types/handlers for CommonJS consumers: the same declarations as handlers.d.ts (see main.d.cts).
import type * as m from './handlers.js' with { 'resolution-mode': 'import' };
export = m;
