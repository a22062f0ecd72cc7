// ferro/types/snapshot-agent: the names undici declares in its types/snapshot-agent.d.ts, re-exported from ferro's own declarations.
export { SnapshotAgent, SnapshotRecorder } from '../dist/main.js';
