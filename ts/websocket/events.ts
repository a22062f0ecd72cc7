// The event classes a WebSocket fires (WHATWG HTML §9.3 / WebSockets): MessageEvent, CloseEvent,
// ErrorEvent. Node has no CloseEvent or ErrorEvent of its own on every supported version.
import type { EventInit } from '../core/event-types.js';

export interface MessageEventInit<T = unknown> extends EventInit {
  data?: T;
  origin?: string;
  lastEventId?: string;
  source?: unknown;
  ports?: readonly unknown[];
}

// `any` as in undici's and the DOM's typings: `JSON.parse(e.data)` must compile unchanged.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class MessageEvent<T = any> extends Event {
  readonly data: T;
  readonly origin: string;
  readonly lastEventId: string;
  readonly source: unknown;
  readonly ports: readonly unknown[];

  constructor(type: string, init: MessageEventInit<T> = {}) {
    super(type, init);
    this.data = init.data as T;
    this.origin = init.origin ?? '';
    this.lastEventId = init.lastEventId ?? '';
    this.source = init.source ?? null;
    this.ports = Object.freeze([...(init.ports ?? [])]);
  }
}

export interface CloseEventInit extends EventInit {
  wasClean?: boolean;
  code?: number;
  reason?: string;
}

export class CloseEvent extends Event {
  readonly wasClean: boolean;
  readonly code: number;
  readonly reason: string;

  constructor(type: string, init: CloseEventInit = {}) {
    super(type, init);
    this.wasClean = init.wasClean ?? false;
    this.code = init.code ?? 0;
    this.reason = init.reason ?? '';
  }
}

export interface ErrorEventInit extends EventInit {
  message?: string;
  filename?: string;
  lineno?: number;
  colno?: number;
  error?: unknown;
}

export class ErrorEvent extends Event {
  readonly message: string;
  readonly filename: string;
  readonly lineno: number;
  readonly colno: number;
  /** The failure (undici types it as Error; it is always one here). */
  readonly error: Error;

  constructor(type: string, init: ErrorEventInit = {}) {
    super(type, init);
    this.message = init.message ?? '';
    this.filename = init.filename ?? '';
    this.lineno = init.lineno ?? 0;
    this.colno = init.colno ?? 0;
    this.error = init.error as Error;
  }
}
