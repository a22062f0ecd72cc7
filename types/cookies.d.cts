// ferro/types/cookies for CommonJS consumers: the same declarations as cookies.d.ts (see main.d.cts).
import type * as m from './cookies.js' with { 'resolution-mode': 'import' };
export = m;
