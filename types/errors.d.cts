// ferro/types/errors for CommonJS consumers: the same declarations as errors.d.ts (see main.d.cts).
import type * as m from './errors.js' with { 'resolution-mode': 'import' };
export = m;
