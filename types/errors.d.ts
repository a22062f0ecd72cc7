// ferro/types/errors: the names undici declares in its types/errors.d.ts, re-exported from ferro's own declarations.
export { errors as default, errors } from '../dist/main.js';
