// ferro/types/global-origin for CommonJS consumers: the same declarations as global-origin.d.ts (see main.d.cts).
import type * as m from './global-origin.js' with { 'resolution-mode': 'import' };
export = m;
