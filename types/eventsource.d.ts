// ferro/types/eventsource: the names undici declares in its types/eventsource.d.ts, re-exported from ferro's own declarations.
export { EventSource, type EventSourceInit, type EventSourceEventMap } from '../dist/main.js';
