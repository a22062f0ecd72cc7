// ferro/types/api for CommonJS consumers: the same declarations as api.d.ts (see main.d.cts).
import type * as m from './api.js' with { 'resolution-mode': 'import' };
export = m;
