// ferro/types/formdata: the names undici declares in its types/formdata.d.ts, re-exported from ferro's own declarations.
export { FormData } from '../dist/main.js';
