// ferro/types/h2c-client for CommonJS consumers: the same declarations as h2c-client.d.ts (see main.d.cts).
import type * as m from './h2c-client.js' with { 'resolution-mode': 'import' };
export = m;
