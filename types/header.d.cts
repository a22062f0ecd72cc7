// ferro/types/header for CommonJS consumers: the same declarations as header.d.ts (see main.d.cts).
import type * as m from './header.js' with { 'resolution-mode': 'import' };
export = m;
