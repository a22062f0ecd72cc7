// ferro/types/dispatcher1-wrapper: the names undici declares in its types/dispatcher1-wrapper.d.ts, re-exported from ferro's own declarations.
export { Dispatcher1Wrapper as default, Dispatcher1Wrapper } from '../dist/main.js';
