// ferro/types/diagnostics-channel: the names undici declares in its types/diagnostics-channel.d.ts, re-exported from ferro's own declarations.
export type { DiagnosticsChannel } from '../dist/main.js';
