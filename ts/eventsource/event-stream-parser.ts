// The text/event-stream parser (HTML, "Server-sent events", §9.2.5–9.2.6): bytes in, events out.
// Lines end in CR, LF or CRLF (a CRLF may be split across chunks); a leading UTF-8 BOM is dropped;
// each line is decoded as UTF-8 once it is whole, so a character split across chunks is intact.
// The `maxEventSize` limits (undici 8.11's, same bounds) keep a hostile stream from growing one
// event, one unfinished line or the count of data lines without end.

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = [0xef, 0xbb, 0xbf];

// The longest "name: " prefix ("event: ", "retry: "): an unfinished line may exceed the event
// limit by that much before it is refused.
const FIELD_PREFIX_BYTES = 7;
// Object overhead per data line or buffered chunk, from which their count limit follows.
const BYTES_PER_ITEM = 128;
const MIN_ITEMS = 1024;
const MAX_ITEMS = 131072;

const FIELDS = ['data', 'event', 'id', 'retry'] as const;
type Field = (typeof FIELDS)[number];

/** The known field `buf[start, end)` names, compared as bytes (no decoding per line); null for others. */
function fieldOf(buf: Buffer, start: number, end: number): Field | null {
  const length = end - start;
  for (const field of FIELDS) {
    if (field.length !== length) continue;
    let i = 0;
    while (i < length && buf[start + i] === field.charCodeAt(i)) i++;
    if (i === length) return field;
  }
  return null;
}

/** One event ready to fire: its type ('message' unless named), data, and the last event ID then. */
export interface ParsedEvent {
  type: string;
  data: string;
  lastEventId: string;
}

/** What the parser reports besides events: a new reconnection time (`retry`). */
export interface ParserSink {
  event(event: ParsedEvent): void;
  retry(ms: number): void;
}

/** The stream broke one of the `maxEventSize` limits; the connection must fail. */
export class EventSizeExceededError extends Error {
  constructor() {
    super('EventSource message size exceeded');
    this.name = 'EventSizeExceededError';
  }
}

function digitsOnly(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

export class EventStreamParser {
  readonly #sink: ParserSink;
  /** 0: no limits. */
  readonly #maxEventSize: number;
  /** Most data lines per event and most chunks one unfinished line may span. */
  readonly #maxItems: number;

  // Leading bytes held until it is known whether they are a BOM; null once decided.
  #bomCheck: number[] | null = [];
  // The previous chunk ended in CR: an LF starting this one belongs to that line ending.
  #skipLF = false;
  // The unfinished line, in pieces.
  #line: Uint8Array[] = [];
  #lineLength = 0;

  // The event being built (the spec's buffers).
  #data: string[] = [];
  #dataBytes = 0;
  #eventType = '';
  #eventTypeBytes = 0;
  #idBytes = 0;
  #retryBytes = 0;
  /** The spec's last event ID buffer: kept across events, committed when one is dispatched. */
  #lastEventIdBuffer: string;
  #lastEventId: string;

  constructor(sink: ParserSink, options: { maxEventSize: number; lastEventId?: string }) {
    this.#sink = sink;
    this.#maxEventSize = options.maxEventSize;
    this.#maxItems = options.maxEventSize > 0 ? Math.min(MAX_ITEMS, Math.max(MIN_ITEMS, Math.floor(options.maxEventSize / BYTES_PER_ITEM))) : 0;
    this.#lastEventIdBuffer = options.lastEventId ?? '';
    this.#lastEventId = this.#lastEventIdBuffer;
  }

  /** The last event ID string (what a reconnection sends as Last-Event-ID). */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** Parses one chunk; throws EventSizeExceededError when a limit is broken. */
  push(chunk: Uint8Array): void {
    if (this.#bomCheck !== null) {
      chunk = this.#dropBom(chunk);
      if (chunk.length === 0) return;
    }
    // A Buffer view (no copy), for its native indexOf and UTF-8 decoding.
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (this.#skipLF) {
      this.#skipLF = false;
      if (buf[0] === LF) start = 1;
    }
    // The next CR, searched again only once passed (most streams have none).
    let cr = buf.indexOf(CR, start);
    while (start < buf.length) {
      if (cr !== -1 && cr < start) cr = buf.indexOf(CR, start);
      const lf = buf.indexOf(LF, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      this.#growLine(end - start);
      if (this.#line.length === 0) {
        this.#processLine(buf, start, end);
      } else {
        this.#line.push(buf.subarray(start, end));
        const line = Buffer.concat(this.#line, this.#lineLength);
        this.#line = [];
        this.#processLine(line, 0, line.length);
      }
      this.#lineLength = 0;
      start = end + 1;
      if (buf[end] === CR) {
        if (start === buf.length) this.#skipLF = true;
        else if (buf[start] === LF) start++;
      }
    }
    if (start < buf.length) {
      this.#growLine(buf.length - start);
      if (this.#maxItems > 0 && this.#line.length >= this.#maxItems) throw new EventSizeExceededError();
      // A copy: the caller may reuse its chunk once this returns.
      this.#line.push(Buffer.from(buf.subarray(start)));
    }
  }

  /** Holds the first bytes until they are known to be a BOM (dropped) or not (kept). */
  #dropBom(chunk: Uint8Array): Uint8Array {
    const held = this.#bomCheck!;
    let i = 0;
    while (held.length < BOM.length && i < chunk.length) {
      const byte = chunk[i]!;
      if (byte !== BOM[held.length]) {
        // Not a BOM: what was held goes back in front of the rest.
        this.#bomCheck = null;
        const out = new Uint8Array(held.length + chunk.length - i);
        out.set(held, 0);
        out.set(chunk.subarray(i), held.length);
        return out;
      }
      held.push(byte);
      i++;
    }
    if (held.length < BOM.length) return chunk.subarray(chunk.length);
    this.#bomCheck = null;
    return chunk.subarray(i);
  }

  /** Counts `bytes` more of the current line, which may not pass maxEventSize + 7. */
  #growLine(bytes: number): void {
    this.#lineLength += bytes;
    if (this.#maxEventSize > 0 && this.#lineLength > this.#maxEventSize + FIELD_PREFIX_BYTES) throw new EventSizeExceededError();
  }

  /** One whole line: `buf[start, end)`, without its line ending. */
  #processLine(buf: Buffer, start: number, end: number): void {
    if (start === end) return this.#dispatch();
    if (buf[start] === COLON) return; // a comment
    let colon = buf.indexOf(COLON, start);
    if (colon >= end) colon = -1;
    const nameEnd = colon === -1 ? end : colon;
    const valueStart = colon === -1 ? end : buf[colon + 1] === SPACE && colon + 1 < end ? colon + 2 : colon + 1;
    const valueBytes = end - valueStart;
    const value = (): string => buf.toString('utf8', valueStart, end);
    switch (fieldOf(buf, start, nameEnd)) {
      case 'data': {
        if (this.#maxItems > 0 && this.#data.length >= this.#maxItems) throw new EventSizeExceededError();
        // Lines are joined with LF: each after the first adds a byte.
        const bytes = this.#dataBytes + (this.#data.length > 0 ? 1 : 0) + valueBytes;
        this.#checkSize(bytes - this.#dataBytes);
        this.#dataBytes = bytes;
        this.#data.push(value());
        return;
      }
      case 'event':
        this.#checkSize(valueBytes - this.#eventTypeBytes);
        this.#eventTypeBytes = valueBytes;
        this.#eventType = value();
        return;
      case 'id': {
        // An ID with NUL is ignored whole (the spec), so a server cannot make a header of it.
        const nul = buf.indexOf(0, valueStart);
        if (nul !== -1 && nul < end) return;
        this.#checkSize(valueBytes - this.#idBytes);
        this.#idBytes = valueBytes;
        this.#lastEventIdBuffer = value();
        return;
      }
      case 'retry': {
        const text = value();
        if (!digitsOnly(text)) return;
        this.#checkSize(valueBytes - this.#retryBytes);
        this.#retryBytes = valueBytes;
        this.#sink.retry(Number.parseInt(text, 10));
        return;
      }
      default:
        return; // unknown fields are ignored
    }
  }

  /** Refuses growth that takes the pending event past maxEventSize. */
  #checkSize(growth: number): void {
    if (this.#maxEventSize === 0) return;
    const total = this.#dataBytes + this.#eventTypeBytes + this.#idBytes + this.#retryBytes + growth;
    if (total > this.#maxEventSize) throw new EventSizeExceededError();
  }

  /** A blank line: the event built so far fires (if it has data), and the buffers reset. */
  #dispatch(): void {
    this.#lastEventId = this.#lastEventIdBuffer;
    const data = this.#data;
    const type = this.#eventType === '' ? 'message' : this.#eventType;
    this.#data = [];
    this.#dataBytes = 0;
    this.#eventType = '';
    this.#eventTypeBytes = 0;
    this.#idBytes = 0;
    this.#retryBytes = 0;
    if (data.length === 0) return;
    this.#sink.event({ type, data: data.join('\n'), lastEventId: this.#lastEventId });
  }
}
