// ferro/types/index for CommonJS consumers: the same declarations as index.d.ts (see main.d.cts).
import type * as m from './index.js' with { 'resolution-mode': 'import' };
export = m;
