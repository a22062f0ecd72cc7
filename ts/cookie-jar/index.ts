// The cookie jar: CookieJar, its stores, and their types.
export { CookieJar, type CookieJarOptions, type CookieRequestContext } from './cookie-jar.js';
export { MemoryCookieStore, type CookieStore } from './cookie-store.js';
export { SqliteCookieStore, type SqliteCookieStoreOpts } from './sqlite-cookie-store.js';
export type { CookieJarCookie, StoredCookie, SameSite } from './stored-cookie.js';
export type { CookieJarJSON, CookieJarJSONCookie } from './jar-json.js';
