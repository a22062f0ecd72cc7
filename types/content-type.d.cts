// ferro/types/content-type for CommonJS consumers: the same declarations as content-type.d.ts (see main.d.cts).
import type * as m from './content-type.js' with { 'resolution-mode': 'import' };
export = m;
