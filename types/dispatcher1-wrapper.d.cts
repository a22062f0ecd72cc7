// ferro/types/dispatcher1-wrapper for CommonJS consumers: the same declarations as dispatcher1-wrapper.d.ts (see main.d.cts).
import type * as m from './dispatcher1-wrapper.js' with { 'resolution-mode': 'import' };
export = m;
