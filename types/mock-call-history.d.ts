// ferro/types/mock-call-history: the names undici declares in its types/mock-call-history.d.ts, re-exported from ferro's own declarations.
export { MockCallHistoryLog, MockCallHistory } from '../dist/main.js';
