// ferro/types/connector for CommonJS consumers: the same declarations as connector.d.ts (see main.d.cts).
import type * as m from './connector.js' with { 'resolution-mode': 'import' };
export = m;
