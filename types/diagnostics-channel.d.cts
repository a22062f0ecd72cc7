// ferro/types/diagnostics-channel for CommonJS consumers: the same declarations as diagnostics-channel.d.ts (see main.d.cts).
import type * as m from './diagnostics-channel.js' with { 'resolution-mode': 'import' };
export = m;
