// ferro/types/mock-client for CommonJS consumers: the same declarations as mock-client.d.ts (see main.d.cts).
import type * as m from './mock-client.js' with { 'resolution-mode': 'import' };
export = m;
