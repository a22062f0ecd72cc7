// ferro/types/cookies: the names undici declares in its types/cookies.d.ts, re-exported from ferro's own declarations.
export { getCookies, getSetCookies, setCookie, deleteCookie, parseCookie, type Cookie } from '../dist/main.js';
