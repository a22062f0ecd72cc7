// ferro/types/mock-errors: the names undici declares in its types/mock-errors.d.ts, re-exported from ferro's own declarations.
export { mockErrors as default, mockErrors } from '../dist/main.js';
