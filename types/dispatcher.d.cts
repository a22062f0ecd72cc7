// ferro/types/dispatcher for CommonJS consumers: the same declarations as dispatcher.d.ts (see main.d.cts).
import type * as m from './dispatcher.js' with { 'resolution-mode': 'import' };
export = m;
