// ferro/types/formdata for CommonJS consumers: the same declarations as formdata.d.ts (see main.d.cts).
import type * as m from './formdata.js' with { 'resolution-mode': 'import' };
export = m;
