// ferro/types/eventsource for CommonJS consumers: the same declarations as eventsource.d.ts (see main.d.cts).
import type * as m from './eventsource.js' with { 'resolution-mode': 'import' };
export = m;
