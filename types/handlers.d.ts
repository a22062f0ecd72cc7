// ferro/types/handlers: the names undici declares in its types/handlers.d.ts, re-exported from ferro's own declarations.
export { RedirectHandler, DecoratorHandler } from '../dist/main.js';
