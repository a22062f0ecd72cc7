// ferro/types/cache-interceptor for CommonJS consumers: the same declarations as cache-interceptor.d.ts (see main.d.cts).
import type * as m from './cache-interceptor.js' with { 'resolution-mode': 'import' };
export = m;
