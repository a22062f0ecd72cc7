// install(): puts ferro's fetch, WebSocket and EventSource classes on globalThis, as undici's install() does,
// so code that uses the globals runs on ferro.
import { fetch } from './fetch.js';
import { FormData, Headers, Request, Response } from './whatwg-classes.js';
import { WebSocket } from '../websocket/websocket.js';
import { CloseEvent, ErrorEvent, MessageEvent } from '../websocket/events.js';
import { EventSource } from '../eventsource/eventsource.js';

/**
 * The real class behind one of whatwg-classes' lazy stand-ins. Those look the class up on
 * globalThis at first use, so the global must stay the real class: a stand-in put there would
 * look itself up.
 */
function realClass(standIn: { prototype: object }): unknown {
  return (standIn.prototype as { constructor: unknown }).constructor;
}

/** Sets globalThis's fetch, Headers, Request, Response, FormData, WebSocket and its events, and EventSource to ferro's. */
export function install(): void {
  const globals = globalThis as Record<string, unknown>;
  // Resolved before anything on globalThis changes, so each is Node's class whatever comes next.
  const classes = { Headers: realClass(Headers), Request: realClass(Request), Response: realClass(Response), FormData: realClass(FormData) };
  globals.fetch = fetch;
  Object.assign(globals, classes);
  globals.WebSocket = WebSocket;
  globals.CloseEvent = CloseEvent;
  globals.ErrorEvent = ErrorEvent;
  globals.MessageEvent = MessageEvent;
  globals.EventSource = EventSource;
}
