// ferro/types/dispatcher: the names undici declares in its types/dispatcher.d.ts, re-exported from ferro's own declarations.
export { Dispatcher as default, Dispatcher } from '../dist/main.js';
