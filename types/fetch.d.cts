// ferro/types/fetch for CommonJS consumers: the same declarations as fetch.d.ts (see main.d.cts).
import type * as m from './fetch.js' with { 'resolution-mode': 'import' };
export = m;
