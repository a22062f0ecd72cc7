// The global origin: the base URL that fetch(), Request and Response.redirect resolve relative
// URLs against outside a browser. It lives on the same global symbol as undici's (and as the
// copy of undici inside Node), so Node's Request class, which ferro's fetch builds requests with,
// honours it as well, and so does undici's setGlobalOrigin on the same process.

const kGlobalOrigin = Symbol.for('undici.globalOrigin.1');

function store(value: URL | undefined): void {
  // Writable but not configurable, as undici defines it, so either library can change it later.
  Object.defineProperty(globalThis, kGlobalOrigin, { value, writable: true, enumerable: false, configurable: false });
}

/** The base URL relative fetch URLs resolve against, or undefined for none. */
export function getGlobalOrigin(): URL | undefined {
  return (globalThis as Record<symbol, URL | undefined>)[kGlobalOrigin];
}

/** Sets the global origin (an http: or https: URL), or clears it with undefined. */
export function setGlobalOrigin(origin: string | URL | undefined): void {
  if (origin === undefined) {
    store(undefined);
    return;
  }
  const url = new URL(origin);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Only http & https urls are allowed, received ${url.protocol}`);
  }
  store(url);
}
