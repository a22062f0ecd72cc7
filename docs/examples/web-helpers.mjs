// undici's helpers around fetch: cookies on Headers, MIME types, the global origin that relative
// URLs resolve against, install() onto globalThis, and the default export.
import ferro, { fetch, getSetCookies, getCookies, setCookie, Headers, parseMIMEType, serializeAMimeType, setGlobalOrigin, install } from 'ferro';
import { startServer } from './_server.mjs';

// Cookies: write Set-Cookie headers, read them back, read a Cookie header.
const response = new Headers();
setCookie(response, { name: 'session', value: 'abc123', httpOnly: true, sameSite: 'Lax', path: '/' });
console.log(response.get('set-cookie'));
console.log(getSetCookies(response));
console.log(getCookies(new Headers({ cookie: 'session=abc123; theme=dark' })));

// MIME types as the WHATWG standard parses them.
const mime = parseMIMEType('Text/HTML; Charset="utf-8"');
console.log(mime.essence, mime.parameters.get('charset'), serializeAMimeType(mime));

// Relative URLs resolve against the global origin.
const server = await startServer();
setGlobalOrigin(server.origin);
console.log(await (await fetch('/relative')).text());

// install(): globalThis.fetch (and Headers, WebSocket, …) are now ferro's.
install();
console.log(globalThis.fetch === ferro.fetch, await (await globalThis.fetch('/via-global')).text());

setGlobalOrigin(undefined);
await ferro.getGlobalDispatcher().close();
server.close();
