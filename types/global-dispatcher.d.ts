// ferro/types/global-dispatcher: the names undici declares in its types/global-dispatcher.d.ts, re-exported from ferro's own declarations.
export { getGlobalDispatcher, setGlobalDispatcher } from '../dist/main.js';
