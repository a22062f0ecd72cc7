// ferro/types/client-stats: the names undici declares in its types/client-stats.d.ts, re-exported from ferro's own declarations.
export type { ClientStats as default, ClientStats } from '../dist/main.js';
