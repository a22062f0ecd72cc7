// The event classes a WebSocket fires (WHATWG HTML §9.3 / WebSockets): MessageEvent, CloseEvent,
// ErrorEvent. Node has no CloseEvent or ErrorEvent of its own on every supported version. They
// behave as WebIDL interfaces, as undici's do: the type argument is required, init members are
// converted (or refused with undici's messages), and the attributes are getters on the prototype
// that refuse any other receiver.
import type { EventInit } from '../core/event-types.js';
import { inspect } from 'node:util';
import { webidlInterface } from '../core/webidl-interface.js';

export interface MessageEventInit<T = unknown> extends EventInit {
  data?: T;
  origin?: string;
  lastEventId?: string;
  source?: unknown;
  ports?: readonly unknown[];
}

export interface CloseEventInit extends EventInit {
  wasClean?: boolean;
  code?: number;
  reason?: string;
}

export interface ErrorEventInit extends EventInit {
  message?: string;
  filename?: string;
  lineno?: number;
  colno?: number;
  error?: unknown;
}

/** How WebIDL error messages show a value (undici's `Stringify`). */
function shown(v: unknown): string {
  if (typeof v === 'string') return `"${v}"`;
  if (typeof v === 'symbol') return `Symbol(${v.description})`;
  if (typeof v === 'bigint') return `${v}n`;
  if ((typeof v === 'object' && v !== null) || typeof v === 'function') return inspect(v);
  return String(v);
}

function requireType(args: number, name: string): void {
  if (args === 0) throw new TypeError(`${name} constructor: 1 argument required, but only 0 present.`);
}

/** A dictionary argument: undefined and null are empty; any other non-object is refused. */
function dictionary<T>(init: T | null | undefined, name: string): Partial<T> {
  if (init == null) return {};
  if (typeof init !== 'object' && typeof init !== 'function') {
    throw new TypeError(`${name} constructor: Expected eventInitDict to be a dictionary.`);
  }
  return init;
}

function illegal(): never {
  throw new TypeError('Illegal invocation');
}

/** WebIDL `unsigned short` / `unsigned long` (modulo, no clamping), for code / lineno / colno. */
function unsigned(v: unknown, bits: 16 | 32): number {
  const n = Math.trunc(Number(v));
  if (!Number.isFinite(n)) return 0;
  const m = 2 ** bits;
  return ((n % m) + m) % m;
}

const isPort = (v: unknown): boolean => typeof MessagePort === 'function' && v instanceof MessagePort;
const NO_PORTS: readonly unknown[] = Object.freeze([]);

function ports(v: unknown): readonly unknown[] {
  const prefix = 'MessageEvent constructor';
  if (v === undefined) return NO_PORTS;
  const iterator = (v as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator];
  if (v === null || typeof v !== 'object' || typeof iterator !== 'function') {
    throw new TypeError(`${prefix}: eventInitDict.ports (${shown(v)}) is not iterable.`);
  }
  const list = [...(v as Iterable<unknown>)];
  list.forEach((p, i) => {
    if (!isPort(p)) throw new TypeError(`${prefix}: Expected eventInitDict.ports[${i}] ("${shown(p)}") to be an instance of MessagePort.`);
  });
  return list.length === 0 ? NO_PORTS : Object.freeze(list);
}

function source(v: unknown): unknown {
  if (v == null) return null;
  // Node has no WindowProxy or ServiceWorker: a MessagePort is the only source there is.
  if (!isPort(v)) throw new TypeError(`MessageEvent constructor: Expected eventInitDict.source ("${shown(v)}") to be an instance of MessagePort.`);
  return v;
}

interface MessageFields<T> {
  data: T;
  origin: string;
  lastEventId: string;
  source: unknown;
  ports: readonly unknown[];
}

// `any` as in undici's and the DOM's typings: `JSON.parse(e.data)` must compile unchanged.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class MessageEvent<T = any> extends Event {
  readonly #f: MessageFields<T>;

  constructor(type: string, init?: MessageEventInit<T> | null) {
    requireType(arguments.length, 'MessageEvent');
    const d = dictionary(init, 'MessageEvent');
    super(String(type), d);
    this.#f = {
      data: (d.data === undefined ? null : d.data) as T,
      origin: d.origin === undefined ? '' : String(d.origin),
      lastEventId: d.lastEventId === undefined ? '' : String(d.lastEventId),
      source: source(d.source),
      ports: ports(d.ports),
    };
  }

  static #fields<T>(e: MessageEvent<T>): MessageFields<T> {
    return #f in e ? e.#f : illegal();
  }

  get data(): T {
    return MessageEvent.#fields(this).data;
  }
  get origin(): string {
    return MessageEvent.#fields(this).origin;
  }
  get lastEventId(): string {
    return MessageEvent.#fields(this).lastEventId;
  }
  get source(): unknown {
    return MessageEvent.#fields(this).source;
  }
  get ports(): readonly unknown[] {
    return MessageEvent.#fields(this).ports;
  }

  /** The legacy initializer; as in undici, it returns a new event rather than changing this one. */
  initMessageEvent(
    type: string,
    bubbles = false,
    cancelable = false,
    data: T | null = null,
    origin = '',
    lastEventId = '',
    source: unknown = null,
    ports: readonly unknown[] = [],
  ): MessageEvent<T> {
    MessageEvent.#fields(this);
    requireType(arguments.length, 'MessageEvent.initMessageEvent');
    return new MessageEvent<T>(type, { bubbles, cancelable, data: data as T, origin, lastEventId, source, ports });
  }
}

interface CloseFields {
  wasClean: boolean;
  code: number;
  reason: string;
}

export class CloseEvent extends Event {
  readonly #f: CloseFields;

  constructor(type: string, init?: CloseEventInit | null) {
    requireType(arguments.length, 'CloseEvent');
    const d = dictionary(init, 'CloseEvent');
    super(String(type), d);
    this.#f = {
      wasClean: Boolean(d.wasClean),
      code: d.code === undefined ? 0 : unsigned(d.code, 16),
      reason: d.reason === undefined ? '' : String(d.reason),
    };
  }

  static #fields(e: CloseEvent): CloseFields {
    return #f in e ? e.#f : illegal();
  }

  get wasClean(): boolean {
    return CloseEvent.#fields(this).wasClean;
  }
  get code(): number {
    return CloseEvent.#fields(this).code;
  }
  get reason(): string {
    return CloseEvent.#fields(this).reason;
  }
}

interface ErrorFields {
  message: string;
  filename: string;
  lineno: number;
  colno: number;
  error: Error;
}

export class ErrorEvent extends Event {
  readonly #f: ErrorFields;

  constructor(type: string, init?: ErrorEventInit | null) {
    requireType(arguments.length, 'ErrorEvent');
    const d = dictionary(init, 'ErrorEvent');
    super(String(type), d);
    this.#f = {
      message: d.message === undefined ? '' : String(d.message),
      filename: d.filename === undefined ? '' : String(d.filename),
      lineno: d.lineno === undefined ? 0 : unsigned(d.lineno, 32),
      colno: d.colno === undefined ? 0 : unsigned(d.colno, 32),
      error: d.error as Error,
    };
  }

  static #fields(e: ErrorEvent): ErrorFields {
    return #f in e ? e.#f : illegal();
  }

  get message(): string {
    return ErrorEvent.#fields(this).message;
  }
  get filename(): string {
    return ErrorEvent.#fields(this).filename;
  }
  get lineno(): number {
    return ErrorEvent.#fields(this).lineno;
  }
  get colno(): number {
    return ErrorEvent.#fields(this).colno;
  }
  /** The failure (undici types it as Error; it is always one here). */
  get error(): Error {
    return ErrorEvent.#fields(this).error;
  }
}

webidlInterface(MessageEvent, ['data', 'origin', 'lastEventId', 'source', 'ports', 'initMessageEvent']);
webidlInterface(CloseEvent, ['wasClean', 'code', 'reason']);
webidlInterface(ErrorEvent, ['message', 'filename', 'lineno', 'colno', 'error']);
