// ferro/types/global-dispatcher for CommonJS consumers: the same declarations as global-dispatcher.d.ts (see main.d.cts).
import type * as m from './global-dispatcher.js' with { 'resolution-mode': 'import' };
export = m;
