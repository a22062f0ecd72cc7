// ferro/types/util for CommonJS consumers: the same declarations as util.d.ts (see main.d.cts).
import type * as m from './util.js' with { 'resolution-mode': 'import' };
export = m;
